"""Capture through the spool: check, acknowledge on fsync, write, mark, ack, replay.

A capture is checked at the spool's door (what the store cannot hold is a
``ValueError`` before anything is written), appended and fsync'd (the
acknowledgement), then written through the group commit
(:mod:`.commit`): staged in the caller's call, committed, flushed, marked in
the audit trail by its capture id and acked in the spool in the background.

Order matters for "exactly once": a crash before the marker replays the
capture (the duplicate merges into the record already written: same text,
similarity 1.0); a crash after it only acks. An entry that fails with
anything but a store error (it would fail on every replay) is moved to the
spool's dead-letter file, and replay goes on with the rest.
"""

from __future__ import annotations

import math
import threading
from datetime import UTC, datetime
from typing import Any

from hindsight_lg._messages import plain_messages
from hindsight_lg.backends.base import check_namespace
from hindsight_lg.errors import StoreError
from hindsight_lg.memory.durability.spool import Spool, SpoolEntry, marker_id
from hindsight_lg.model import MemoryRecord, Scope
from hindsight_lg.telemetry import SPOOL, degrade

#: The store keeps agent and thread ids in VARCHAR(512) fields (UTF-8 bytes).
MAX_ID_BYTES = 512


def check_capture(
    *,
    namespace: Any = None,
    agent_id: Any = None,
    thread_id: Any = None,
    speaker: Any = None,
    event_time: Any = None,
    scope: Any = None,
    **_: Any,
) -> None:
    """Refuse capture arguments the store cannot hold, before anything is written.

    Raises:
        ValueError: an id longer than 512 bytes of UTF-8, an unknown scope,
            or an ``event_time`` that is not a finite POSIX time between the
            years 1 and 9999; a namespace :func:`check_namespace` refuses.
        TypeError: an id or speaker that is not a string.
    """
    if namespace is not None:
        check_namespace(namespace)
    for name, value in (("agent_id", agent_id), ("thread_id", thread_id)):
        if value is None:
            continue
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, not {type(value).__name__}")
        if len(value.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
            raise ValueError(
                f"{name} is longer than {MAX_ID_BYTES} bytes of UTF-8: "
                "use a shorter id (a hash of a long one works)"
            )
    if speaker is not None and not isinstance(speaker, str):
        raise TypeError(f"speaker must be a str, not {type(speaker).__name__}")
    if scope is not None:
        Scope(scope)
    if event_time is not None:
        _check_time(event_time)


def _check_time(value: Any) -> None:
    try:
        ok = math.isfinite(float(value))
        ok = ok and datetime.fromtimestamp(float(value), UTC).year >= 1
    except (TypeError, ValueError, OverflowError, OSError):
        ok = False
    if not ok:
        raise ValueError(
            f"event_time {value!r} is not a POSIX time the store can hold "
            "(seconds since 1970, between the years 1 and 9999)"
        )


class SpooledCapture:
    """The spool-backed write path of one memory engine.

    Args:
        memory: the engine; its ``_capture_now`` does the real write.
        spool: where captures wait until the store has them.
    """

    def __init__(self, memory: Any, spool: Spool) -> None:
        self.memory = memory
        self.spool = spool
        self._failed: set[str] = set(e.id for e in spool.pending())
        self._lock = threading.Lock()

    @staticmethod
    def payload(messages_or_text: Any, **kwargs: Any) -> dict[str, Any]:
        """Capture arguments as a JSON-ready dict (messages become plain dicts)."""
        if not isinstance(messages_or_text, str):
            many = messages_or_text
            many = many if isinstance(many, (list, tuple)) else [many]
            messages_or_text = plain_messages(many)
        scope = kwargs.get("scope")
        if scope is not None:
            kwargs["scope"] = Scope(scope).value
        if kwargs.get("source_ids") is not None:
            kwargs["source_ids"] = list(kwargs["source_ids"])
        return {"messages_or_text": messages_or_text, **kwargs}

    def accept(self, item: dict[str, Any]) -> dict[str, Any]:
        """Check and spool a worker item before it is queued; returns it with its id.

        Raises:
            ValueError, TypeError: the item cannot be stored (see
                :func:`check_capture`); nothing was spooled.
            StoreUnavailable: the spool could not be written.
        """
        if item.get("capture_id"):
            return item
        fields = {k: v for k, v in item.items() if k != "messages_or_text"}
        if fields.get("event_time") is None:
            fields["event_time"] = self.memory.clock()
        check_capture(**fields)
        payload = self.payload(item["messages_or_text"], **fields)
        return {**payload, "capture_id": self.spool.append(payload)}

    def capture(
        self, payload: dict[str, Any], capture_id: str | None
    ) -> list[MemoryRecord]:
        """Spool (unless already spooled under ``capture_id``), then write.

        Raises:
            ValueError, TypeError: the capture cannot be stored; nothing was
                spooled (or, when it fails later, it went to the dead letters).
            StoreUnavailable: the spool could not be written.
        """
        if capture_id is None:
            check_capture(**payload)
        cid = capture_id or self.spool.append(payload)
        written = self.run(cid, payload, check=False)
        if written is not None and self._failed:
            self.replay()
        return written or []

    def run(
        self, cid: str, payload: dict[str, Any], *, check: bool, replay: bool = False
    ) -> list[MemoryRecord] | None:
        """Write one spooled capture; ``None`` when the store failed (kept spooled).

        Args:
            cid: the capture id.
            payload: the capture's arguments.
            check: look for the capture's marker first (it may have finished).
            replay: swallow errors other than store errors (after quarantine).

        Raises:
            Exception: whatever the write raised other than a store error,
                after the entry went to the dead-letter file (not on replay).
        """
        namespace = payload["namespace"]
        try:
            if check and self.memory.backend.audit(namespace, marker_id(cid)):
                self.memory.backend.flush()  # see replay()
                self.spool.ack(cid)  # finished before a crash: nothing to redo
                return []
            written: list[MemoryRecord] = self.memory._capture_now(
                **payload, capture_id=cid
            )
        except StoreError as exc:
            self._deferred(cid, exc)
            return None
        except Exception as exc:
            self._quarantine(SpoolEntry(cid, payload), exc)
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

    def _deferred(self, cid: str, exc: StoreError) -> None:
        with self._lock:
            self._failed.add(cid)
        degrade(
            SPOOL,
            "the store failed: the capture waits in the spool and is replayed",
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
                self.memory.backend.flush()
        except StoreError:
            return 0  # the store is still down: replayed later
        done = 0
        for entry in todo:
            try:
                check_capture(**entry.item)
            except (TypeError, ValueError) as exc:
                self._quarantine(entry, exc)
                continue
            if entry.id in finished:
                self.spool.ack(entry.id)  # finished before a crash: nothing to redo
                with self._lock:
                    self._failed.discard(entry.id)
                continue
            if self.run(entry.id, entry.item, check=False, replay=True) is None:
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
        audit = self.memory.backend.audit
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
