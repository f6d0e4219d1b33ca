"""Capture through the spool: check, acknowledge on fsync, write, mark, ack, replay.

A capture arrives checked (:mod:`hindsight_lg.memory.requests`: what the
store cannot hold is a ``ValueError`` before anything is written; entries read
back from the spool are checked again by the same validator), is appended and
fsync'd (the acknowledgement), then written by the engine's write callable
through the group commit
(:mod:`.commit`): staged in the caller's call, committed, flushed, marked in
the audit trail by its capture id and acked in the spool in the background.

Order matters for "exactly once": a crash before the marker replays the
capture (the duplicate merges into the record already written: same text,
similarity 1.0); a crash after it only acks. An entry that fails with
anything but a store error or a missing embedding model (it would fail on
every replay) is moved to the spool's dead-letter file, and replay goes on
with the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from hindsight_lg.backends.base import MemoryBackend, check_namespace
from hindsight_lg.errors import ModelNotAvailable, StoreError
from hindsight_lg.memory.durability.spool import Spool, SpoolEntry, marker_id
from hindsight_lg.memory.requests import CaptureRequest, from_payload, unchecked
from hindsight_lg.model import MemoryRecord
from hindsight_lg.telemetry import SPOOL, degrade

#: Writes one checked capture under its spool id: the encode pipeline's door.
Write = Callable[[CaptureRequest, str | None], list[MemoryRecord]]


class SpooledCapture:
    """The spool-backed write path of one memory engine.

    Args:
        spool: where captures wait until the store has them.
        write: writes one checked capture (with its capture id) to the store.
        store: where the write lands; its audit trail holds each finished
            capture's marker.
        clock: "now" for a queued capture that names no ``event_time``.
    """

    def __init__(
        self,
        spool: Spool,
        write: Write,
        store: MemoryBackend,
        clock: Callable[[], float],
    ) -> None:
        self.spool = spool
        self._write = write
        self._store = store
        self._clock = clock
        self._failed: set[str] = set(e.id for e in spool.pending())
        self._lock = threading.Lock()

    def accept(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Spool worker items before they are queued; returns them with their ids.

        Items are :meth:`CaptureRequest.payload` dicts, checked by ``submit``
        (the parts of one turn, cut by the worker). They are written with one
        ``fsync``, all or none: a turn is never half accepted.

        Raises:
            StoreUnavailable: the spool could not be written; none was accepted.
        """
        out = [dict(it) for it in items]
        fresh = [it for it in out if not it.get("capture_id")]
        now = self._clock()
        for it in fresh:
            if it.get("event_time") is None:
                it["event_time"] = now  # a replay must not date it later
        if fresh:
            # Spooled as they are now (copies): the id is the entry's, not a field.
            ids = self.spool.append_many(fresh)
            for it, cid in zip(fresh, ids, strict=True):
                it["capture_id"] = cid
        return out

    def capture(
        self, request: CaptureRequest, capture_id: str | None
    ) -> list[MemoryRecord]:
        """Spool (unless already spooled under ``capture_id``), then write.

        Raises:
            ValueError, TypeError: the capture failed to encode; it went to
                the dead letters.
            StoreUnavailable: the spool could not be written.
        """
        cid = capture_id or self.spool.append(request.payload())
        written = self._run(cid, request, check=False)
        if written is not None and self._failed:
            self.replay()
        return written or []

    def run(
        self,
        cid: str,
        payload: Mapping[str, Any],
        *,
        check: bool,
        replay: bool = False,
    ) -> list[MemoryRecord] | None:
        """Write one spooled capture; ``None`` when the store failed (kept spooled).

        Args:
            cid: the capture id.
            payload: the capture's arguments, as spooled (checked here).
            check: look for the capture's marker first (it may have finished).
            replay: swallow errors other than store errors (after quarantine).

        Raises:
            Exception: whatever the write raised other than a store error,
                after the entry went to the dead-letter file (not on replay).
        """
        try:
            request = from_payload(payload)
        except (KeyError, TypeError, ValueError) as exc:
            self._quarantine(SpoolEntry(cid, dict(payload)), exc)
            if check or replay:
                return []
            raise
        return self._run(cid, request, check=check, replay=replay)

    def _run(
        self,
        cid: str,
        request: CaptureRequest,
        *,
        check: bool,
        replay: bool = False,
    ) -> list[MemoryRecord] | None:
        try:
            if check and self._store.audit(request.namespace, marker_id(cid)):
                self._store.flush()  # see replay()
                self.spool.ack(cid)  # finished before a crash: nothing to redo
                return []
            written = self._write(request, cid)
        except (StoreError, ModelNotAvailable) as exc:
            # A missing model (memory opened for work that embeds nothing on
            # a machine without the store's model) is no fault of the entry:
            # it waits, like a store outage, for an engine that has the model.
            self._deferred(cid, exc)
            return None
        except Exception as exc:
            self._quarantine(SpoolEntry(cid, request.payload()), exc)
            if check or replay:
                return []
            raise
        with self._lock:
            self._failed.discard(cid)
        return written

    def _quarantine(self, entry: SpoolEntry, exc: Exception) -> None:
        with self._lock:
            self._failed.discard(entry.id)
        self.spool.quarantine(entry, exc)
        degrade(
            SPOOL,
            "a spooled capture cannot be written: moved to the dead-letter file",
            log_event="capture_quarantined",
            capture_id=entry.id,
            error=repr(exc)[:200],
            dead_letters=str(self.spool.dead_path),
        )

    def _deferred(self, cid: str, exc: Exception) -> None:
        with self._lock:
            self._failed.add(cid)
        degrade(
            SPOOL,
            "the store (or the embedding model) failed: the capture waits in the "
            "spool and is replayed",
            log_event="capture_spooled",
            capture_id=cid,
            error=str(exc)[:200],
            pending=len(self._failed),
        )

    def replay(self) -> int:
        """Write captures left by a crash or a store outage; returns how many landed.

        An entry the store cannot hold is quarantined and replay goes on; a
        store error stops it (the store is down: the rest waits too).
        """
        with self._lock:
            todo = [e for e in self.spool.pending() if e.id in self._failed]
        try:
            finished = self._finished(todo)
            if finished:
                # A marker read back may be a row Milvus Lite recovered from
                # its log but has not written to a segment again: flush it
                # before the spool lets go of the capture.
                self._store.flush()
        except StoreError:
            return 0  # the store is still down: replayed later
        done = 0
        for entry in todo:
            try:
                request = from_payload(entry.item)
            except (KeyError, TypeError, ValueError) as exc:
                self._quarantine(entry, exc)
                continue
            if entry.id in finished:
                self.spool.ack(entry.id)  # finished before a crash: nothing to redo
                with self._lock:
                    self._failed.discard(entry.id)
                continue
            if self._run(entry.id, request, check=False, replay=True) is None:
                break  # the store is still down: keep the rest for later
            done += 1
        return done

    def _finished(self, entries: list[SpoolEntry]) -> set[str]:
        """Ids of ``entries`` whose marker is in the store, read before any replay.

        Read first, so replayed captures do not make the store flush between
        lookups; one read of the audit trail for a namespace with many.
        """
        by_namespace: dict[str, list[str]] = {}
        for entry in entries:
            if isinstance(entry.item.get("namespace"), str):
                by_namespace.setdefault(entry.namespace, []).append(entry.id)
        found: set[str] = set()
        audit = self._store.audit
        for namespace, ids in by_namespace.items():
            try:
                check_namespace(namespace)
            except (TypeError, ValueError):
                continue  # quarantined by the caller
            if len(ids) > 8:
                marks = {a.memory_id for a in audit(namespace)}
                found |= {i for i in ids if marker_id(i) in marks}
            else:
                found |= {i for i in ids if audit(namespace, marker_id(i))}
        return found

    def wanted(self, capture_id: str) -> bool:
        """Whether a spooled capture is still owed (not purged by a forget)."""
        return self.spool.has(capture_id)


def queued(capture: Write) -> Callable[..., list[MemoryRecord]]:
    """The background worker's callable over ``capture``.

    Its items are payloads that ``submit`` checked (the worker may have
    joined several turns' messages into one): each becomes its request
    again, unchecked, and goes down the capture path, never back through
    the engine.
    """

    def run(**item: Any) -> list[MemoryRecord]:
        capture_id = item.pop("capture_id", None)
        return capture(unchecked(item), capture_id)

    return run
