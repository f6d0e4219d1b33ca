"""Capture through the spool: acknowledge on fsync, write, mark, ack, replay.

Order matters for "exactly once": the records are written and flushed, then
an audit marker keyed by the capture id, then the spool's ``ack``. A crash
before the marker replays the capture (the duplicate merges into the record
already written: same text, similarity 1.0); a crash after it only acks.
"""

from __future__ import annotations

import threading
from typing import Any

from hindsight_lg._messages import plain_messages
from hindsight_lg.errors import StoreError
from hindsight_lg.memory.capture.spool import Spool, marker_id
from hindsight_lg.model import AuditEntry, MemoryRecord, Scope
from hindsight_lg.telemetry import SPOOL, degrade


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
        """Spool a worker item before it is queued; returns it with its capture id."""
        if item.get("capture_id"):
            return item
        fields = {k: v for k, v in item.items() if k != "messages_or_text"}
        if fields.get("event_time") is None:
            fields["event_time"] = self.memory.clock()
        payload = self.payload(item["messages_or_text"], **fields)
        return {**payload, "capture_id": self.spool.append(payload)}

    def capture(
        self, payload: dict[str, Any], capture_id: str | None
    ) -> list[MemoryRecord]:
        """Spool (unless already spooled under ``capture_id``), then write."""
        cid = capture_id or self.spool.append(payload)
        written = self.run(cid, payload, check=False)
        if written is not None and self._failed:
            self.replay()
        return written or []

    def run(
        self, cid: str, payload: dict[str, Any], *, check: bool
    ) -> list[MemoryRecord] | None:
        """Write one spooled capture; ``None`` when the store failed (kept spooled)."""
        namespace = payload["namespace"]
        backend = self.memory.backend
        try:
            if check and backend.audit(namespace, marker_id(cid)):
                self.spool.ack(cid)  # finished before a crash: nothing to redo
                return []
            written: list[MemoryRecord] = self.memory._capture_now(**payload)
            marker = AuditEntry(namespace, marker_id(cid), "captured", detail={})
            backend.append_audit(namespace, [marker])
            backend.flush()
        except StoreError as exc:
            self._deferred(cid, exc)
            return None
        self.spool.ack(cid)
        with self._lock:
            self._failed.discard(cid)
        return written

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
        """Write captures left by a crash or a store outage; returns how many landed."""
        with self._lock:
            todo = [e for e in self.spool.pending() if e.id in self._failed]
        done = 0
        for entry in todo:
            if self.run(entry.id, entry.item, check=True) is None:
                break  # the store is still down: keep the rest for later
            done += 1
        return done
