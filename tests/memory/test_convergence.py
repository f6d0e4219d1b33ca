"""Replays and restatements converge: one current version, whatever the order or process."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest

from hindsight_lg import HindsightMemory

OLD = "I take the 7:40 train"
NEW = "These days I cycle to the office instead of taking the train"
SCRIPT = """
import sys
from hindsight_lg import HindsightMemory
with HindsightMemory.from_uri(sys.argv[1], embedder="hashing") as memory:
    for text in sys.argv[2:]:
        memory.capture(text, namespace="u42", speaker="user")
"""


def _active(memory: HindsightMemory, namespace: str = "u42") -> list[str]:
    return sorted(r.content for r in memory.list_memories(namespace))


def _play(db: Path, *texts: str) -> None:
    """Run the capture script in a fresh process on the same Milvus Lite file."""
    subprocess.run(
        [sys.executable, "-c", SCRIPT, str(db), *texts],
        check=True,
        timeout=120,
        cwd=Path(__file__).parents[2],
    )


@pytest.mark.slow
def test_replaying_a_script_in_a_second_process_leaves_one_current_version(
    tmp_path: Path,
) -> None:
    """Old then new, twice, in two processes on one file: only the new is active."""
    db = tmp_path / "memory.db"
    _play(db, OLD, NEW)
    _play(db, OLD, NEW)
    with HindsightMemory.from_uri(str(db), embedder="hashing") as memory:
        assert [NEW] == _active(memory)
        recalled = memory.recall("how do I get to the office?", namespace="u42")
        assert NEW == recalled.records[0].content
        assert OLD in [r.content for r in memory.list_memories("u42", history=True)]


def test_restating_in_a_reopened_store_reinforces_the_memory(tmp_path: Path) -> None:
    """The same statement after a reopen merges into the memory and raises it."""
    db = str(tmp_path / "memory.db")
    with HindsightMemory.from_uri(db, embedder="hashing") as memory:
        [first] = memory.capture("I work at Google", namespace="u42")
    with HindsightMemory.from_uri(db, embedder="hashing") as memory:
        [again] = memory.capture("I'm still working at Google", namespace="u42")
        assert first.id == again.id
        assert again.importance > first.importance
        assert ["I work at Google"] == _active(memory)


def test_concurrent_captures_of_a_change_converge_to_one_current_version(
    tmp_path: Path,
) -> None:
    """Two threads telling the same move at once leave one residence active."""
    with HindsightMemory.from_uri(str(tmp_path / "m.db"), embedder="hashing") as memory:
        memory.capture("我住在杭州", namespace="u42")
        start = threading.Barrier(2)

        def tell(text: str) -> None:
            start.wait()
            memory.capture(text, namespace="u42")

        threads = [
            threading.Thread(target=tell, args=(t,))
            for t in ("我上个月搬到深圳了", "我搬到深圳了")
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        active = _active(memory)
        assert 1 == len(active)
        assert "深圳" in active[0]
