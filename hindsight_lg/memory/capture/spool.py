"""A crash-safe capture spool: fsync'd JSON Lines, replayed on start.

A capture is *acknowledged* once its line is on disk (written and fsync'd);
only then does :meth:`HindsightMemory.capture` or ``submit`` go on. After the
store write and flush, an ``ack`` line marks it done; acknowledged entries are
dropped when the file is compacted. On start, every entry without an ``ack``
is replayed. Replays are idempotent: a capture leaves a marker in the audit
trail keyed by its capture id, and a replay that finds the marker only acks.

Each line is ``<crc32 hex> <json>``. A line whose checksum fails is a torn
write from a crash (it was never acknowledged) and is skipped.
"""

from __future__ import annotations

import json
import os
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

    Args:
        path: the spool file (its directory is created).
        compact_after: rewrite the file once this many entries are acknowledged.

    Example:
        >>> import tempfile, os
        >>> spool = Spool(os.path.join(tempfile.mkdtemp(), "capture.spool"))
        >>> cid = spool.append({"messages_or_text": "hi", "namespace": "u1"})
        >>> [e.id for e in spool.pending()] == [cid]
        True
        >>> spool.ack(cid); spool.pending()
        []
    """

    def __init__(self, path: str | os.PathLike[str], *, compact_after: int = 256):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.compact_after = compact_after
        self._lock = threading.Lock()
        self._pending: dict[str, SpoolEntry] = {}
        self._acked = 0
        self.corrupt_lines = 0
        self._load()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

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
        cid = capture_id or new_id()
        line = _encode({"op": "put", "id": cid, "item": item})
        with self._lock:
            os.write(self._fd, line)
            os.fsync(self._fd)
            self._pending[cid] = SpoolEntry(cid, dict(item))
        return cid

    def ack(self, capture_id: str) -> None:
        """Mark a capture as safe in the store (no fsync: a lost ack only replays)."""
        with self._lock:
            if self._pending.pop(capture_id, None) is None:
                return
            os.write(self._fd, _encode({"op": "ack", "id": capture_id}))
            self._acked += 1
            if self._acked >= self.compact_after:
                self._compact()

    def pending(self, namespace: str | None = None) -> list[SpoolEntry]:
        """Captures not acknowledged yet, oldest first."""
        with self._lock:
            entries = list(self._pending.values())
        return [e for e in entries if namespace is None or e.namespace == namespace]

    def purge(self, namespace: str) -> int:
        """Remove a tenant's pending captures from memory and from disk."""
        with self._lock:
            doomed = [k for k, e in self._pending.items() if e.namespace == namespace]
            for key in doomed:
                del self._pending[key]
            self._compact()
        return len(doomed)

    def compact(self) -> None:
        """Rewrite the file with pending entries only (atomic rename)."""
        with self._lock:
            self._compact()

    def _compact(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with tmp.open("wb") as fh:
            for entry in self._pending.values():
                fh.write(_encode({"op": "put", "id": entry.id, "item": entry.item}))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        _fsync_dir(self.path.parent)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self._acked = 0

    def close(self) -> None:
        """Compact and close the file; idempotent."""
        with self._lock:
            if self._fd < 0:
                return
            self._compact()
            os.close(self._fd)
            self._fd = -1


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is.
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def marker_id(capture_id: str) -> str:
    """The audit ``memory_id`` that records a finished capture."""
    return MARKER_PREFIX + capture_id
