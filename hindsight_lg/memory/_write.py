"""The engine's write callable: one checked capture becomes memories.

Both write paths end here: a capture without a spool calls it directly, the
spool's :class:`~hindsight_lg.memory.durability.SpooledCapture` calls it with
the capture's spool id (on the caller's thread, the background worker or a
replay). It holds the capture's span, the namespace's write lock and the
writer's batch, so a capture is traced and serialised the same way wherever
it comes from.
"""

from __future__ import annotations

from collections.abc import Callable

from hindsight_lg import telemetry
from hindsight_lg.memory._locks import WriteLocks
from hindsight_lg.memory.capture import Placement, Writer, to_turns
from hindsight_lg.memory.durability import Spool
from hindsight_lg.memory.requests import CaptureRequest
from hindsight_lg.model import MemoryRecord


class CapturePath:
    """Writes checked captures through the writer, one namespace lock at a time.

    Args:
        writer: the encode pipeline.
        locks: the backend's write locks (a capture locks its namespace).
        clock: "now" as POSIX seconds.
        spool: the capture spool; a spooled capture it no longer holds was
            forgotten while it waited and writes nothing.
        written: told ``(namespace, how many)`` after each capture.
    """

    def __init__(
        self,
        writer: Writer,
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
            self._writer.batch(namespace, capture_id),
        ):
            if capture_id and self._spool and not self._spool.has(capture_id):
                return []  # forgotten while it waited in the queue
            written = self._writer.capture_turns(
                turns, _placement(request), when=when, now=now
            )
            span.set_attribute("hindsight.memory_ids", [r.id for r in written])
            telemetry.set_attributes(span, steps)
        self._written(namespace, len(written))
        return written


def _placement(request: CaptureRequest) -> Placement:
    return Placement(
        request.namespace,
        request.agent_id or "",
        request.scope,
        request.thread_id or "",
    )
