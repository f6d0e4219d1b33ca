"""The engine's write callable: one checked capture becomes memories.

Both write paths end here: a capture without a spool calls it directly, the
spool's :class:`~hindsight_lg.memory.durability.SpooledCapture` calls it with
the capture's spool id (on the caller's thread, the background worker or a
replay). It holds the capture's span, the namespace's write lock and the
writer's batch, so a capture is traced and serialised the same way wherever
it comes from.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hindsight_lg import telemetry
from hindsight_lg.memory._locks import WriteLocks
from hindsight_lg.memory.capture import Placement, to_turns
from hindsight_lg.memory.durability import Spool
from hindsight_lg.memory.requests import CaptureRequest, unchecked
from hindsight_lg.model import MemoryRecord

if TYPE_CHECKING:
    from hindsight_lg.memory.capture import Writer


class LazyWriter:
    """The engine's writer, built at its first capture.

    Building it loads the encode pipeline: the keyword tables of both
    languages, a noticeable part of a second to compile. An engine that only
    lists, audits, exports or restores never captures, so it never pays.

    Args:
        build: makes the writer; called once, by the first capture (or replay).
    """

    def __init__(self, build: Callable[[], Writer]) -> None:
        self._build = build
        self._writer: Writer | None = None
        self._lock = threading.Lock()

    def __call__(self) -> Writer:
        """The writer, built now if no capture built it yet."""
        writer = self._writer
        if writer is None:
            with self._lock:  # two first captures at once build one writer
                if self._writer is None:
                    self._writer = self._build()
                writer = self._writer
        return writer

    def forget_turns(self, namespace: str) -> None:
        """Drop ``namespace``'s remembered last turns (none before a capture)."""
        if self._writer is not None:
            self._writer.forget_turns(namespace)

    def close(self) -> None:
        """Stop the writer's background loads, if a capture built it."""
        if self._writer is not None and self._writer.prefetch is not None:
            self._writer.prefetch.close()


class CapturePath:
    """Writes checked captures through the writer, one namespace lock at a time.

    Args:
        writer: the encode pipeline (a :class:`LazyWriter`, or any callable
            returning the writer).
        locks: the backend's write locks (a capture locks its namespace).
        clock: "now" as POSIX seconds.
        spool: the capture spool; a spooled capture it no longer holds was
            forgotten while it waited and writes nothing.
        written: told ``(namespace, how many)`` after each capture.
    """

    def __init__(
        self,
        writer: Callable[[], Writer],
        locks: WriteLocks,
        clock: Callable[[], float],
        spool: Spool | None,
        written: Callable[[str, int], None],
    ) -> None:
        self._writer = writer
        self._locks = locks
        self._clock = clock
        self._spool = spool
        self._written = written

    def __call__(
        self, request: CaptureRequest, capture_id: str | None = None
    ) -> list[MemoryRecord]:
        """Encode and store one capture; returns the memories written or updated."""
        turns = to_turns(request.content, request.speaker, request.source_ids)
        now = self._clock()
        when = now if request.event_time is None else request.event_time
        namespace = request.namespace
        with (
            telemetry.memory_span(
                telemetry.CAPTURE,
                telemetry.CREATE_MEMORY,
                namespace=namespace,
                agent=request.agent_id or "",
                turns=len(turns),
                **{
                    "session.id": request.thread_id,
                    "input.value": "\n".join(t.text for t in turns)[:2000],
                },
            ) as span,
            self._locks.namespace(namespace),
            telemetry.collecting() as steps,
            self._writer().batch(namespace, capture_id),
        ):
            if capture_id and self._spool and not self._spool.has(capture_id):
                return []  # forgotten while it waited in the queue
            written = self._writer().capture_turns(
                turns, _placement(request), when=when, now=now
            )
            span.set_attribute("hindsight.memory_ids", [r.id for r in written])
            telemetry.set_attributes(span, steps)
        self._written(namespace, len(written))
        return written

    def ahead(self, items: Sequence[Mapping[str, Any]]) -> None:
        """Embed what queued captures will embed, in one model call.

        The worker's look-ahead (see :mod:`hindsight_lg.memory.capture.ahead`):
        ``items`` are its payloads, in the order they will be written.
        """
        from hindsight_lg.memory.capture import plan_ahead

        writer = self._writer()
        if writer.prefetch is not None:  # their tenants load side by side
            writer.prefetch.warm(str(item["namespace"]) for item in items)
        planned = []
        for item in items:
            request = unchecked({k: v for k, v in item.items() if k != "capture_id"})
            turns = to_turns(request.content, request.speaker, request.source_ids)
            when = self._clock() if request.event_time is None else request.event_time
            planned.append((turns, _placement(request), when))
        plan_ahead(writer, planned)


def _placement(request: CaptureRequest) -> Placement:
    return Placement(
        request.namespace,
        request.agent_id or "",
        request.scope,
        request.thread_id or "",
    )
