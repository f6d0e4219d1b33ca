"""Closing the last backend on a Milvus Lite file lets other processes open it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.testing import HashingEmbedder

EMB = HashingEmbedder()
# Another process counts the memories: it fails with StoreLocked while this
# process still holds the file.
OTHER = (
    "import sys\n"
    "from hindsight_lg import HindsightMemory\n"
    "with HindsightMemory.from_uri(sys.argv[1], embedder='hashing') as m:\n"
    "    print(len(m.list_memories('u')))\n"
)


def _other_process_reads(db: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", OTHER, db],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_a_closed_memory_frees_its_lite_file_for_another_process(
    tmp_path: Path,
) -> None:
    """After close(), a second process opens the file and reads what was written."""
    db = str(tmp_path / "m.db")
    with HindsightMemory.from_uri(db, embedder=EMB) as memory:
        memory.capture("I prefer green tea over coffee", namespace="u")
        held = _other_process_reads(db)
    assert held.returncode != 0 and "another process holds" in held.stderr
    done = _other_process_reads(db)
    assert 0 == done.returncode, done.stderr[-2000:]
    assert int(done.stdout.strip()) >= 1


def test_the_file_stays_served_until_the_last_backend_on_it_closes(
    tmp_path: Path,
) -> None:
    """Two backends on one file: closing one leaves the other working."""
    db = str(tmp_path / "m.db")
    first, second = MilvusBackend(db), MilvusBackend(db)
    first.setup(dim=EMB.dim, model_id=EMB.model_id)
    second.setup(dim=EMB.dim, model_id=EMB.model_id)
    first.close()
    assert second.namespaces() == []
    assert _other_process_reads(db).returncode != 0
    second.close()
    assert 0 == _other_process_reads(db).returncode
    reopened = MilvusBackend(db)  # and this process can open it again
    reopened.setup(dim=EMB.dim, model_id=EMB.model_id)
    assert reopened.namespaces() == []
    reopened.close()
