"""A Milvus Lite store and the files beside it are readable by their owner only."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus._integrity import LEDGER, RowLedger
from hindsight_lg.testing import HashingEmbedder

# Files would be 0644 under the usual umask unless the code says otherwise.
pytestmark = pytest.mark.usefixtures("usual_umask")


def mode(path: Path) -> str:
    """The permission bits of ``path`` itself, in octal (a link is not followed)."""
    return oct(stat.S_IMODE(os.lstat(path).st_mode))


def open_to_others(root: Path) -> list[str]:
    """Everything under ``root`` (itself included) with a group or other bit set."""
    found = [root, *root.rglob("*")]
    return sorted(
        str(p.relative_to(root.parent))
        for p in found
        if not p.is_symlink() and os.lstat(p).st_mode & 0o077
    )


def _capture_and_close(db: Path) -> str:
    """Capture a turn into a store at ``db``; the store folder's mode while open."""
    memory = HindsightMemory.from_uri(
        str(db), embedder=HashingEmbedder(), warm_up=False
    )
    try:
        memory.capture("My sister Ana lives in Lisbon", namespace="u1")
        memory.flush()
        return mode(db)
    finally:
        memory.close()


def test_a_new_lite_store_its_folders_and_files_are_private(tmp_path: Path) -> None:
    """The store folder and new parents are 0700; nothing in or beside it is open to others."""
    db = tmp_path / "data" / "app" / "hindsight.db"
    assert _capture_and_close(db) == "0o700"
    assert [mode(tmp_path / "data"), mode(db.parent)] == ["0o700", "0o700"]
    assert open_to_others(db.parent) == []
    assert {p.name for p in db.parent.iterdir()} >= {
        "hindsight.db",
        "hindsight.db.spool",
    }


def test_a_store_left_readable_by_others_is_narrowed_at_open(tmp_path: Path) -> None:
    """Folders 0755 and files 0644 (an earlier version's store) lose those bits at open."""
    db = tmp_path / "hindsight.db"
    _capture_and_close(db)
    for each in [db, *db.rglob("*")]:
        each.chmod(0o755 if each.is_dir() else 0o644)
    backend = MilvusBackend.from_uri(str(db))
    try:
        assert open_to_others(db) == []
    finally:
        backend.close()


def test_the_row_ledger_is_0600_and_follows_no_planted_link(tmp_path: Path) -> None:
    """The ledger's rewrite ignores a link at its old temporary name and is 0600."""
    store = tmp_path / "hindsight.db"
    store.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"untouched")
    (store / f"{LEDGER}.tmp").symlink_to(victim)
    ledger = RowLedger(str(store), threading.Lock())
    ledger.write({"hindsight_memories": 3})
    assert (victim.read_bytes(), mode(store / LEDGER), ledger.read()) == (
        b"untouched",
        "0o600",
        {"hindsight_memories": 3},
    )


def test_a_killed_ledger_rewrite_leaves_nothing_once_the_store_opens(
    tmp_path: Path,
) -> None:
    """Temporary ledger files a kill left (old and new names) are removed at open."""
    db = tmp_path / "hindsight.db"
    _capture_and_close(db)
    leftovers = [db / f"{LEDGER}.tmp", db / f".{LEDGER}.0123456789abcdef.tmp"]
    for each in leftovers:
        each.write_text("{}")
    MilvusBackend.from_uri(str(db)).close()
    assert [p.exists() for p in leftovers] == [False, False]
