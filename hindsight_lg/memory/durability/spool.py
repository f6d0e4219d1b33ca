"""A crash-safe capture spool: fsync'd JSON Lines, replayed on start.

A capture is *acknowledged* once its line is on disk (written and fsync'd);
only then does :meth:`HindsightMemory.capture` or ``submit`` go on. After the
store write and flush, an ``ack`` line marks it done; acknowledged entries are
dropped when the file is compacted. On start, every entry without an ``ack``
is replayed. Replays are idempotent: a capture leaves a marker in the audit
trail keyed by its capture id, and a replay that finds the marker only acks.

Each line is ``<crc32 hex> <json>``. A line whose checksum fails is a torn
write from a crash (it was never acknowledged) and is skipped.

A short write or a failed ``fsync`` (a full disk) is not an acknowledgement:
the file is cut back to where the line began, so the next line does not
join a torn one, and :class:`~hindsight_lg.errors.StoreUnavailable` is raised.
An entry that can never be written (replay fails on it with anything but a
store error) is moved to the dead-letter file ``<spool>.dead`` so the
entries behind it still land.

One process owns a spool. :meth:`Spool.open` takes an exclusive
``flock`` on ``<spool>.lock`` (writing its pid there) and holds it until
:meth:`Spool.close`; the kernel lets go of it when the process dies, so a
SIGKILL leaves no stale lock. A second opener, in another process or in
this one, gets :class:`~hindsight_lg.errors.StoreLocked` naming the holder,
before it has read or changed anything. Why it matters: the owner keeps
its pending entries in memory and rewrites the file from them (compaction,
purge), so a second writer's lines would be lost on the owner's next
rewrite, and text the second one erased would be written back.
Limit: ``flock`` is advisory and per host; on a network file system that
does not lock, the spool opens with a warning and no exclusivity.

Its files (the spool, ``.dead``, ``.lock``) are 0600 and the folders it
creates 0700, through compaction and purge too (:mod:`hindsight_lg._files`):
rewrites go through an exclusive temporary file, no file is written through
a symbolic link, and what a killed rewrite left is removed at :meth:`open`.
"""

from __future__ import annotations

import fcntl
import json
import os
import threading
import zlib
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hindsight_lg._files import (
    make_dirs,
    narrow_file,
    open_private,
    remove_stale_temps,
    replace_private,
    write_all,
)
from hindsight_lg.errors import StoreLocked, StoreUnavailable
from hindsight_lg.model import new_id
from hindsight_lg.telemetry import get_logger

MARKER_PREFIX = "capture:"


@dataclass(frozen=True, slots=True)
class SpoolEntry:
    """One spooled capture: its id and the keyword arguments of ``capture``."""

    id: str
    item: dict[str, Any]

    @property
    def namespace(self) -> str:
        """The tenant the capture belongs to."""
        return str(self.item.get("namespace", ""))


def _encode(body: dict[str, Any]) -> bytes:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    data = text.encode()
    return f"{zlib.crc32(data):08x} ".encode() + data + b"\n"


def _decode(line: bytes) -> dict[str, Any] | None:
    head, _, data = line.rstrip(b"\n").partition(b" ")
    try:
        if int(head, 16) != zlib.crc32(data):
            return None
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return None
    return body if isinstance(body, dict) and isinstance(body.get("id"), str) else None


class Spool:
    """Append-only, fsync'd log of captures not yet safe in the store.

    The constructor stores its arguments; :meth:`open` creates the folder,
    reads what a previous run left and opens the file for appending. A spool
    not opened yet opens at its first use.

    Args:
        path: the spool file (its directory is created at :meth:`open`).
        compact_after: rewrite the file once this many entries are acknowledged.

    Example:
        >>> import tempfile, os
        >>> spool = Spool(os.path.join(tempfile.mkdtemp(), "capture.spool")).open()
        >>> cid = spool.append({"messages_or_text": "hi", "namespace": "u1"})
        >>> [e.id for e in spool.pending()] == [cid]
        True
        >>> spool.ack(cid); spool.pending()
        []
    """

    def __init__(self, path: str | os.PathLike[str], *, compact_after: int = 256):
        self.path = Path(path)
        self.compact_after = compact_after
        self._lock = threading.Lock()
        self._pending: dict[str, SpoolEntry] = {}
        self._acked = 0
        self.corrupt_lines = 0
        self._fd = -1
        self._lock_fd = -1
        self._opened = False  # stays True after close(): a closed spool stays shut

    def open(self) -> Spool:
        """Create the folder, load pending entries, open the file; idempotent.

        Returns:
            The spool itself, so ``Spool(path).open()`` reads as one step.

        Raises:
            StoreLocked: another process (or another ``Spool`` of this one)
                holds the spool; nothing was read or changed.
            OSError: the folder or file cannot be created or read.
        """
        with self._lock:
            self._open()
        return self

    def _open(self) -> None:
        if self._opened:
            return
        make_dirs(self.path.parent)
        self._lock_fd = _own(self.path, self.lock_path)
        try:
            # Owned now: no rewrite of ours runs, so a temporary file is a
            # killed one's, and it may hold text a forget erased since.
            for path in (self.path, self.dead_path):
                remove_stale_temps(path)
            narrow_file(self.dead_path)
            self._load()
            self._fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
        except BaseException:
            self._release()
            raise
        self._opened = True

    @property
    def lock_path(self) -> Path:
        """The lock file whose ``flock`` says which process owns the spool."""
        return self.path.with_name(self.path.name + ".lock")

    def _release(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # closing the last descriptor drops the flock
            self._lock_fd = -1

    @contextmanager
    def _ready(self) -> Iterator[None]:
        """Hold the lock with the spool open (opened now on first use)."""
        with self._lock:
            self._open()
            yield

    def _load(self) -> None:
        if not self.path.exists():
            return
        for body in self._read():
            if body.get("op") == "put" and isinstance(body.get("item"), dict):
                self._pending[body["id"]] = SpoolEntry(body["id"], body["item"])
            elif body.get("op") == "ack":
                self._pending.pop(body["id"], None)
                self._acked += 1

    def _read(self) -> Iterator[dict[str, Any]]:
        with self.path.open("rb") as fh:
            for line in fh:
                body = _decode(line)
                if body is None:
                    self.corrupt_lines += 1
                    get_logger().warning("spool_line_skipped", path=str(self.path))
                    continue
                yield body

    def append(self, item: dict[str, Any], capture_id: str | None = None) -> str:
        """Write a capture durably (fsync) and return its capture id.

        Raises:
            TypeError: ``item`` is not JSON-serialisable.
        """
        return self.append_many([item], [capture_id])[0]

    def append_many(
        self, items: Sequence[dict[str, Any]], ids: Sequence[str | None] = ()
    ) -> list[str]:
        """Write several captures with one ``fsync``; returns their capture ids.

        All or nothing: when the disk takes less than the whole batch, none
        of it is acknowledged.

        Raises:
            TypeError: an item is not JSON-serialisable.
            StoreUnavailable: the disk did not take the lines (full, read-only).
        """
        cids = [c or new_id() for c in (*ids, *[None] * (len(items) - len(ids)))]
        data = b"".join(
            _encode({"op": "put", "id": c, "item": it})
            for c, it in zip(cids, items, strict=True)
        )
        with self._ready():
            self._write_durably(data)
            for cid, item in zip(cids, items, strict=True):
                self._pending[cid] = SpoolEntry(cid, dict(item))
        return cids

    def _write_durably(self, data: bytes) -> None:
        """Write ``data`` whole and fsync it, or cut the file back and raise."""
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            write_all(self._fd, data)
            os.fdatasync(self._fd)  # data and size: all a replay needs
        except OSError as exc:
            self._cut_back(start)
            raise StoreUnavailable(
                f"the capture spool {self.path} could not be written "
                f"({exc.strerror or exc}); the capture was not accepted: free "
                "disk space or move the spool, then retry"
            ) from exc

    def _cut_back(self, size: int) -> None:
        # A torn tail would swallow the next line (no newline between them).
        try:
            os.ftruncate(self._fd, size)
        except OSError:
            get_logger().error("spool_truncate_failed", path=str(self.path))

    def ack(self, capture_id: str) -> None:
        """Mark a capture as safe in the store (no fsync: a lost ack only replays)."""
        self.ack_many([capture_id])

    def ack_many(self, capture_ids: Sequence[str]) -> None:
        """Mark captures as safe in the store, in one write.

        A failed write is only logged: an entry without its ``ack`` is
        replayed, and the replay finds its marker and only acks.
        """
        with self._ready():
            done = [c for c in capture_ids if self._pending.pop(c, None) is not None]
            if not done or self._fd < 0:
                return
            data = b"".join(_encode({"op": "ack", "id": c}) for c in done)
            start = os.lseek(self._fd, 0, os.SEEK_END)
            try:
                write_all(self._fd, data)
            except OSError as exc:
                self._cut_back(start)
                get_logger().warning("spool_ack_failed", error=str(exc))
                return
            self._acked += len(done)
            if self._acked >= self.compact_after:
                self._compact()

    def has(self, capture_id: str) -> bool:
        """Whether a capture is still pending (appended, not acked or purged)."""
        with self._ready():
            return capture_id in self._pending

    def pending(self, namespace: str | None = None) -> list[SpoolEntry]:
        """Captures not acknowledged yet, oldest first."""
        with self._ready():
            entries = list(self._pending.values())
        return [e for e in entries if namespace is None or e.namespace == namespace]

    def purge(self, namespace: str, thread_id: str | None = None) -> int:
        """Remove a tenant's (or one thread's) pending captures, from disk too.

        The file is rewritten without them (and the dead-letter file without
        the tenant's entries), so forgotten text does not stay on disk.
        """
        with self._ready():
            doomed = [
                k
                for k, e in self._pending.items()
                if e.namespace == namespace
                and (thread_id is None or e.item.get("thread_id") == thread_id)
            ]
            for key in doomed:
                del self._pending[key]
            self._compact()
            self._purge_dead(namespace, thread_id)
        return len(doomed)

    def quarantine(self, entry: SpoolEntry, error: BaseException) -> None:
        """Move an entry that cannot be written to the dead-letter file.

        The dead-letter line is fsync'd before the entry is acked, so a crash
        in between leaves it in both places, never in neither.
        """
        body = {"id": entry.id, "item": entry.item, "error": repr(error)[:500]}
        with self._lock:
            fd = open_private(self.dead_path, os.O_WRONLY | os.O_APPEND)
            try:
                write_all(fd, _encode(body))
                os.fsync(fd)
            finally:
                os.close(fd)
        self.ack(entry.id)

    @property
    def dead_path(self) -> Path:
        """The dead-letter file: entries replay gave up on, with their error."""
        return self.path.with_name(self.path.name + ".dead")

    def dead(self) -> list[SpoolEntry]:
        """Entries in the dead-letter file, oldest first."""
        if not self.dead_path.exists():
            return []
        with self.dead_path.open("rb") as fh:
            bodies = [b for b in map(_decode, fh) if b is not None]
        return [SpoolEntry(b["id"], b.get("item") or {}) for b in bodies]

    def _purge_dead(self, namespace: str, thread_id: str | None) -> None:
        if not self.dead_path.exists():
            return
        with self.dead_path.open("rb") as fh:
            lines = fh.readlines()
        kept = [
            line for line in lines if not _belongs(_decode(line), namespace, thread_id)
        ]
        if len(kept) != len(lines):
            replace_private(self.dead_path, b"".join(kept))

    def compact(self) -> None:
        """Rewrite the file with pending entries only (atomic rename)."""
        with self._ready():
            self._compact()

    def _compact(self) -> None:
        data = b"".join(
            _encode({"op": "put", "id": e.id, "item": e.item})
            for e in self._pending.values()
        )
        replace_private(self.path, data)
        if self._fd >= 0:
            os.close(self._fd)
        self._fd = open_private(self.path, os.O_WRONLY | os.O_APPEND)
        self._acked = 0

    def close(self) -> None:
        """Compact and close the file; idempotent."""
        with self._lock:
            if self._fd < 0:
                return
            try:
                self._compact()
            except OSError as exc:  # a full disk: the uncompacted file is fine
                get_logger().warning("spool_compact_failed", error=str(exc))
            os.close(self._fd)
            self._fd = -1
            self._release()


def _own(path: Path, lock_path: Path) -> int:
    """Take the spool's lock and write our pid in it; returns its descriptor.

    Raises:
        StoreLocked: another open file description holds the lock.
    """
    fd = open_private(lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = _holder(fd)
        os.close(fd)
        raise StoreLocked(_busy(path, holder)) from None
    except OSError as exc:  # a file system without locks: durable, not exclusive
        get_logger().warning(
            "spool_not_locked", path=str(path), error=exc.strerror or str(exc)
        )
        return fd
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _holder(fd: int) -> int | None:
    """The pid the lock's holder wrote, if it wrote one yet."""
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _busy(path: Path, holder: int | None) -> str:
    """What to do about a spool another owner holds (one line, for the CLI too)."""
    if holder == os.getpid():
        return (
            f"the capture spool {path} is already open in this process "
            f"(pid {holder}) through another Spool: share that memory "
            "(one HindsightMemory per spool) or close it first; nothing was changed"
        )
    who = f"process {holder}" if holder else "another process"
    return (
        f"the capture spool {path} is held by {who}, which is running and owns "
        "it: nothing was read or changed. Forget a tenant through that process "
        "(memory.forget(namespace)), or stop it and run this again; another "
        "process needs a spool of its own"
    )


def _belongs(body: dict[str, Any] | None, namespace: str, thread: str | None) -> bool:
    item = (body or {}).get("item") or {}
    if not isinstance(item, dict) or item.get("namespace") != namespace:
        return False
    return thread is None or item.get("thread_id") == thread


def marker_id(capture_id: str) -> str:
    """The audit ``memory_id`` that records a finished capture."""
    return MARKER_PREFIX + capture_id
