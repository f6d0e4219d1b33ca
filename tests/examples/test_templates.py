"""The chatbot templates run offline and remember per user (and per agent scope)."""

from __future__ import annotations

import importlib
import importlib.resources
import runpy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import main
from hindsight_lg.templates import load
from hindsight_lg.testing import (
    FakeToolChatModel,
    HashingEmbedder,
    InMemoryBackend,
    echo_memories,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MODULES = {"personal_assistant.py", "customer_support.py", "team.py"}


def _load(name: str) -> Any:
    return importlib.import_module(f"hindsight_lg.templates.{name.removesuffix('.py')}")


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def test_personal_assistant_recalls_across_threads_per_user(
    memory: HindsightMemory,
) -> None:
    """Maya's wedding date comes back in a later thread; Tom hears nothing of Maya."""
    replies = _load("personal_assistant.py").run(
        memory, FakeToolChatModel(respond=echo_memories), out=lambda _: None
    )
    assert "June 14" in replies[3]
    assert "peanuts" in replies[2]
    assert "Maya" not in replies[4] and "peanuts" not in replies[4]


def test_customer_support_remembers_contact_preference(memory: HindsightMemory) -> None:
    """The second ticket of c-17 knows 'email'; another customer's ticket does not."""
    module = _load("customer_support.py")
    replies = module.run(memory, module.offline_model(), out=lambda _: None)
    assert "email" in replies[1] and "shipped" in replies[1]
    assert "email" not in replies[2]


def test_team_shares_team_memory_and_keeps_private_notes(
    memory: HindsightMemory,
) -> None:
    """The booker sees what the planner learned in team scope, never its private note."""
    replies = _load("team.py").run(
        memory, FakeToolChatModel(respond=echo_memories), out=lambda _: None
    )
    booker = replies[1:3]
    assert "window seats" in booker[0]
    assert not any("haggles" in r for r in booker)
    assert "haggles" in replies[3]


def test_cli_demo_runs_a_template(capsys: pytest.CaptureFixture[str]) -> None:
    """`hindsight-lg demo --template support` plays the support template offline."""
    code = main(
        ["demo", "--template", "support", "--uri", ":memory:", "--embedder", "hashing"]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "template: support" in out
    assert out.count("->") == 3


def test_templates_ship_as_package_files() -> None:
    """The template modules are files of the installed package, found without examples/."""
    shipped = {
        p.name for p in importlib.resources.files("hindsight_lg.templates").iterdir()
    }
    assert MODULES <= shipped
    assert load("assistant").__name__ == "hindsight_lg.templates.personal_assistant"
    with pytest.raises(ValueError, match="assistant"):
        load("nope")


@pytest.mark.parametrize("script", sorted(MODULES))
def test_example_scripts_run_the_packaged_templates(
    script: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`python examples/<name>.py` runs the packaged template's main offline."""
    monkeypatch.delenv("HINDSIGHT_CHAT_MODEL", raising=False)
    monkeypatch.setenv("HINDSIGHT_URI", ":memory:")
    runpy.run_path(str(EXAMPLES / script), run_name="__main__")
    assert "->" in capsys.readouterr().out


def test_support_recalls_what_its_memory_tool_saved(memory: HindsightMemory) -> None:
    """The note manage_memory saved in ticket t1 comes back in t2, marked, and only there."""
    module = _load("customer_support.py")
    replies = module.run(memory, module.offline_model(), out=lambda _: None)
    [note] = [
        r for r in memory.list_memories("c-17") if r.meta.get("origin") == "memory_tool"
    ]
    assert note.content == "contact me by email, no calls."
    assert (note.source_kind.value, note.thread_id) == ("agent-inferred", "t1")
    assert f"{note.content} (agent-inferred)" in replies[1]
    assert "email" not in replies[2]
    assert memory.list_memories("c-17", kinds=["experience"]) == []
