"""The capture spool's files are its owner's alone: 0600 files, 0700 folders, no links."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest

from hindsight_lg.memory.durability.spool import Spool
from tests.memory._spools import crash


def mode(path: Path) -> str:
    """The permission bits of ``path`` itself, in octal (a link is not followed)."""
    return oct(stat.S_IMODE(os.lstat(path).st_mode))


# Files would be 0644 under the usual umask unless the code says otherwise.
pytestmark = pytest.mark.usefixtures("usual_umask")


def _spool(path: Path, *texts: str, namespace: str = "u1") -> tuple[Spool, list[str]]:
    spool = Spool(path).open()
    ids = [spool.append({"messages_or_text": t, "namespace": namespace}) for t in texts]
    return spool, ids


def test_the_spool_stays_0600_through_compaction(tmp_path: Path) -> None:
    """compact() rewrites the spool as a 0600 file, like the one it replaces."""
    path = tmp_path / "capture.spool"
    spool, ids = _spool(path, "first", "second")
    spool.ack(ids[0])
    spool.compact()
    assert (mode(path), [e.id for e in spool.pending()]) == ("0o600", ids[1:])
    spool.close()
    assert mode(path) == "0o600"


def test_the_dead_letter_file_stays_0600_through_a_purge(tmp_path: Path) -> None:
    """Purging a tenant rewrites the dead letters as a 0600 file."""
    spool, _ = _spool(tmp_path / "capture.spool", "bad turn", namespace="gone")
    spool.append({"messages_or_text": "bad too", "namespace": "kept"})
    for entry in spool.pending():
        spool.quarantine(entry, ValueError("poison"))
    spool.purge("gone")
    assert (mode(spool.dead_path), [e.namespace for e in spool.dead()]) == (
        "0o600",
        ["kept"],
    )
    spool.close()


def test_a_new_spool_folder_and_its_missing_parents_are_0700(tmp_path: Path) -> None:
    """Every folder the spool creates on the way to its file is 0700."""
    path = tmp_path / "var" / "app" / "capture.spool"
    spool, _ = _spool(path, "hello")
    spool.close()
    created = [tmp_path / "var", tmp_path / "var" / "app"]
    assert [mode(p) for p in created] == ["0o700", "0o700"]
    assert [mode(p) for p in sorted(created[1].iterdir())] == ["0o600", "0o600"]


def test_compaction_follows_no_link_planted_at_a_temporary_name(
    tmp_path: Path,
) -> None:
    """A link at the old predictable name ``<spool>.tmp`` is neither written nor kept."""
    path = tmp_path / "capture.spool"
    spool, ids = _spool(path, "secret turn")
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"untouched")
    (tmp_path / "capture.spool.tmp").symlink_to(victim)
    spool.compact()
    assert (victim.read_bytes(), path.is_symlink(), mode(path)) == (
        b"untouched",
        False,
        "0o600",
    )
    crash(spool)
    assert [e.id for e in Spool(path).pending()] == ids


def test_a_spool_found_readable_by_others_is_narrowed_when_opened(
    tmp_path: Path,
) -> None:
    """A spool, dead-letter and lock file an earlier version left 0644 are 0600 once opened."""
    path = tmp_path / "capture.spool"
    spool, _ = _spool(path, "a turn", "a poison turn")
    spool.quarantine(spool.pending()[1], ValueError("poison"))
    crash(spool)
    for each in (path, spool.dead_path, spool.lock_path):
        each.chmod(0o644)
    again = Spool(path).open()
    assert [mode(p) for p in (path, again.dead_path, again.lock_path)] == ["0o600"] * 3
    again.close()


def test_a_link_in_place_of_the_spool_is_refused(tmp_path: Path) -> None:
    """Opening a spool whose path is a symbolic link raises ELOOP and writes nothing."""
    victim = tmp_path / "victim.txt"
    victim.write_bytes(b"untouched")
    path = tmp_path / "capture.spool"
    path.symlink_to(victim)
    spool = Spool(path)
    with pytest.raises(OSError, match="symbolic link") as caught:
        spool.append({"messages_or_text": "hello", "namespace": "u1"})
    assert (caught.value.errno, victim.read_bytes()) == (errno.ELOOP, b"untouched")


def test_leftovers_of_an_interrupted_rewrite_are_removed_at_open(
    tmp_path: Path,
) -> None:
    """Temporary files a killed compaction left (old and new names) go when the spool opens."""
    path = tmp_path / "capture.spool"
    leftovers = [
        tmp_path / "capture.spool.tmp",
        tmp_path / ".capture.spool.0123456789abcdef.tmp",
        tmp_path / ".capture.spool.dead.fedcba9876543210.tmp",
    ]
    for each in leftovers:
        each.write_bytes(b"text a forget erased")
    neighbour = tmp_path / ".capture.spool.x.0123456789abcdef.tmp"
    neighbour.write_bytes(b"another spool's rewrite in progress")
    Spool(path).open().close()
    assert ([p.exists() for p in leftovers], neighbour.exists()) == (
        [False, False, False],
        True,
    )
