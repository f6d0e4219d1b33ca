"""``hindsight-lg rollback``: undo a wrong supersede or a thread from the shell."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import main


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A Lite store where thread b moved the user from Paris to Berlin."""
    path = str(tmp_path / "rb.db")
    with HindsightMemory.from_uri(path, embedder="hashing") as memory:
        memory.capture("I live in Paris.", namespace="u1", thread_id="a")
        memory.capture("I moved to Berlin.", namespace="u1", thread_id="b")
    return path


def contents(path: str) -> dict[str, str]:
    with HindsightMemory.from_uri(path, embedder="hashing") as memory:
        return {
            r.content: r.status.value for r in memory.list_memories("u1", history=True)
        }


def test_a_dry_run_prints_what_would_change_and_changes_nothing(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--dry-run`` lists the ids and leaves the store alone."""
    before = contents(db)
    assert 0 == main(
        ["rollback", "--uri", db, "-n", "u1", "--thread", "b", "--dry-run"]
    )
    out = capsys.readouterr().out
    assert "1 would be archived, 1 would be current again" in out
    assert "dry run" in out
    assert before == contents(db)


def test_a_thread_is_rolled_back_by_id_prefix_or_thread(
    db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The listed 8-character id works; the old home is current again."""
    with HindsightMemory.from_uri(db, embedder="hashing") as memory:
        (berlin,) = [r for r in memory.list_memories("u1") if "Berlin" in r.content]
    assert 0 == main(["rollback", "--uri", db, "-n", "u1", "--memory", berlin.id[:8]])
    assert "1 archived, 1 current again" in capsys.readouterr().out
    assert {
        "I live in Paris.": "active",
        "I moved to Berlin.": "archived",
    } == contents(db)
    assert 0 == main(["rollback", "--uri", db, "-n", "u1", "--thread", "b"])
    assert "nothing to roll back" in capsys.readouterr().out
