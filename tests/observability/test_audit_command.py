"""``hindsight-lg audit``: a memory's origin, merges, supersessions and last use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from hindsight_lg import HindsightMemory
from hindsight_lg._commands.audit import audit_report, render
from hindsight_lg.cli import main
from hindsight_lg.testing import FrozenClock


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    # The CLI configures structlog, as applications do; undo it for other tests.
    yield
    structlog.reset_defaults()


def test_origin_names_thread_messages_and_time(memory: HindsightMemory) -> None:
    """The report says which thread and messages a memory came from, and when."""
    [tea] = memory.capture(
        "I prefer green tea", namespace="u1", thread_id="t1", source_ids=["m1"]
    )
    origin = audit_report(memory, "u1", tea.id)["origin"]
    assert (origin["thread_id"], origin["source_ids"], origin["how"]) == (
        "t1",
        ["m1"],
        "create",
    )
    assert origin["created_at"].endswith("UTC")


def test_merges_are_listed_with_their_messages(memory: HindsightMemory) -> None:
    """A duplicate captured later appears as a merge with its own message ids."""
    [tea] = memory.capture("I prefer green tea", namespace="u1", source_ids=["m1"])
    memory.capture("I prefer green tea", namespace="u1", source_ids=["m7"])
    report = audit_report(memory, "u1", tea.id)
    assert [e["source_ids"] for e in report["merged"]] == [["m7"]]
    assert report["origin"]["source_ids"] == ["m1", "m7"]


def test_supersession_is_reported_on_both_memories(memory: HindsightMemory) -> None:
    """The old memory names its replacement and the new one names what it replaced."""
    [old] = memory.capture("I like Python", namespace="u1")
    [new] = memory.capture("I don't like Python", namespace="u1")
    old_report = audit_report(memory, "u1", old.id)
    assert old_report["memory"]["status"] == "superseded"
    assert old_report["superseded_by"]["id"] == new.id
    assert audit_report(memory, "u1", new.id)["supersedes"] == [old.id]


def test_last_recalled_comes_from_reinforcement(memory: HindsightMemory) -> None:
    """A memory reinforced after a useful recall reports when and how often."""
    [tea] = memory.capture("I prefer green tea", namespace="u1")
    assert audit_report(memory, "u1", tea.id)["last_recalled"] == {
        "at": None,
        "uses": 0,
    }
    clock = memory.clock
    assert isinstance(clock, FrozenClock)
    clock.advance(days=2)
    memory.reinforce("u1", [tea.id])
    last = audit_report(memory, "u1", tea.id)["last_recalled"]
    assert last["uses"] == 1
    assert last["at"] == "2023-11-16 22:13:20 UTC"


def test_a_unique_prefix_finds_the_memory(memory: HindsightMemory) -> None:
    """The 8-character prefix that listings print is enough to audit a memory."""
    [tea] = memory.capture("I prefer green tea", namespace="u1")
    assert audit_report(memory, "u1", tea.id[:8])["memory"]["id"] == tea.id


def test_unknown_id_raises_lookup_error(memory: HindsightMemory) -> None:
    """An id that names no memory is a LookupError naming the namespace."""
    with pytest.raises(LookupError, match="'u1'"):
        audit_report(memory, "u1", "nope")


def test_render_tells_the_story_in_text(memory: HindsightMemory) -> None:
    """The text form names the replacement and says a never-used memory was never recalled."""
    [old] = memory.capture("I like Python", namespace="u1", thread_id="t9")
    [new] = memory.capture("I don't like Python", namespace="u1")
    text = render(audit_report(memory, "u1", old.id))
    assert f"replaced by {new.id}" in text
    assert "thread t9" in text
    assert "used     never" in text and "recalls are not recorded" in text


def test_cli_prints_the_report_from_a_milvus_lite_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``hindsight-lg audit`` opens the store by URI and prints the memory's origin."""
    uri = str(tmp_path / "m.db")
    with HindsightMemory.from_uri(uri, embedder="hashing") as memory:
        [tea] = memory.capture("I prefer green tea", namespace="u1", thread_id="t1")
    code = main(["audit", tea.id, "-n", "u1", "--uri", uri, "--embedder", "hashing"])
    out = capsys.readouterr().out
    assert code == 0
    assert tea.id in out and "thread t1" in out


def test_cli_unknown_id_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unknown id is an error on stderr and exit code 1."""
    uri = str(tmp_path / "m.db")
    with HindsightMemory.from_uri(uri, embedder="hashing") as memory:
        memory.capture("I prefer green tea", namespace="u1")
    code = main(["audit", "nope", "-n", "u1", "--uri", uri, "--embedder", "hashing"])
    assert code == 1
    assert "no memory 'nope'" in capsys.readouterr().err
