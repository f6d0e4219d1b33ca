"""What a newcomer meets first: pipes, --help, the panel's link, audit, .gitignore."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import build_parser, main
from hindsight_lg.testing import HashingEmbedder

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def filled(tmp_path: Path) -> str:
    """A Lite file with 400 memories of user u1 (more than a pipe buffers)."""
    uri = str(tmp_path / "m.db")
    memory = HindsightMemory.from_uri(uri, embedder=HashingEmbedder())
    detail = "who joined the team in spring and works on the payments service " * 3
    for i in range(400):
        memory.capture(f"My colleague Person{i} is someone {detail}", namespace="u1")
    memory.close()
    return uri


def test_a_closed_pipe_ends_quietly(filled: str) -> None:
    """`hindsight-lg list | head -1` prints one line, no error, and exits 0."""
    script = (
        f"{sys.executable} -m hindsight_lg.cli list -n u1 --uri {filled} "
        "--embedder hashing --limit 400 | head -1; exit ${PIPESTATUS[0]}"
    )
    done = subprocess.run(
        ["bash", "-c", script], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert "Broken pipe" not in done.stderr, done.stderr
    assert "Exception ignored" not in done.stderr, done.stderr
    assert len(done.stdout.splitlines()) == 1
    assert done.returncode == 0


def _helps(parser: argparse.ArgumentParser) -> list[str]:
    texts = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                texts += _helps(child)
    return texts


def test_help_shows_no_restructured_text_markup() -> None:
    """No --help page, top-level or sub-command, shows ``double backquotes``."""
    pages = _helps(build_parser())
    assert len(pages) > 10
    assert [p.splitlines()[0] for p in pages if "``" in p] == []


def test_the_panel_prints_a_link_with_the_real_token(
    filled: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The panel's start line is a URL a person can open, token included."""
    import uvicorn

    served: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(kw))
    token = "a-long-enough-panel-token-0123456789"
    argv = ["panel", "--uri", filled, "--embedder", "hashing", "--token", token]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert f"http://127.0.0.1:{served['port']}/?token={token}" in err
    assert "<token>" not in err


def test_audit_does_not_claim_a_memory_was_never_recalled(
    filled: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Right after recall returned a memory, audit does not say "recalled never"."""
    store = ["--uri", filled, "--embedder", "hashing"]
    assert (
        main(["recall", "Person0 payments service", "-n", "u1", *store, "--json"]) == 0
    )
    import json

    found = json.loads(capsys.readouterr().out)
    first = found[0]["id"] if isinstance(found, list) else found["memories"][0]["id"]
    assert main(["audit", first, "-n", "u1", *store]) == 0
    report = capsys.readouterr().out
    assert "recalled never" not in report
    assert "recalls are not recorded" in report


@pytest.mark.parametrize("name", ["", ".lock", ".dead", ".tmp"])
def test_the_capture_spool_is_ignored_by_git(name: str) -> None:
    """The spool beside a Lite file, its lock and its dead letters are in .gitignore."""
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", f"hindsight.db.spool{name}"],
        cwd=ROOT,
        check=False,
    )
    assert ignored.returncode == 0


def test_the_panel_serves_before_the_model_is_loaded(
    filled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The panel serves while the model still loads, and starts loading it
    only once its first page is out: loading holds the CPU and the GIL for
    seconds, and the first page should not wait behind it."""
    import threading
    import time

    import uvicorn
    from starlette.testclient import TestClient

    loading, release, done = threading.Event(), threading.Event(), threading.Event()

    def slow_warm_up(self: HindsightMemory, *args: Any, **kwargs: Any) -> None:
        loading.set()
        release.wait(3)
        done.set()

    seen: list[tuple[bool, int, bool, bool]] = []

    def run(app: Any, **kw: Any) -> None:
        time.sleep(0.5)  # a warm-up started with the server would be loading now
        early = loading.is_set()
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            status = client.get("/").status_code
        seen.append((early, status, done.is_set(), loading.wait(5)))

    monkeypatch.setattr(HindsightMemory, "warm_up", slow_warm_up)
    monkeypatch.setattr(uvicorn, "run", run)
    try:
        assert main(["panel", "--uri", filled, "--embedder", "hashing"]) == 0
    finally:
        release.set()
    # Not loading before the first page; the page served without the model;
    # loading once it was out.
    assert seen == [(False, 200, False, True)]


def test_a_panel_stopped_before_its_first_page_loads_no_model(
    filled: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopping the panel before anyone opened it ends at once, loading nothing."""
    import uvicorn

    warmed: list[bool] = []
    monkeypatch.setattr(
        HindsightMemory, "warm_up", lambda self, *a, **k: warmed.append(True)
    )
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: None)
    assert main(["panel", "--uri", filled, "--embedder", "hashing"]) == 0
    assert warmed == []
