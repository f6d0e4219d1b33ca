"""A backend wrapper that puts each store call in its own client span.

The engine's parts (capture, recall, lifecycle) talk to the store through it,
so a trace shows which Milvus calls an operation made and how long each took.
Calls outside :data:`_TRACED` (setup, close, ...) pass through without a span.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import SpanKind, Status, StatusCode

from hindsight_lg import telemetry
from hindsight_lg.backends import ForwardingBackend
from hindsight_lg.backends.base import MemoryBackend

# Calls worth a span: the ones that reach the database on a recall or a write.
_TRACED = frozenset(
    {
        "get",
        "query",
        "search_dense",
        "search_lexical",
        "upsert",
        "delete",
        "add_edges",
        "edges",
        "delete_edges",
        "append_audit",
        "audit",
        "count",
        "flush",
    }
)


class TracedBackend(ForwardingBackend):
    """Wraps a :class:`~hindsight_lg.backends.base.MemoryBackend`; same interface."""

    def __init__(self, inner: MemoryBackend) -> None:
        super().__init__(inner)
        self._system = getattr(getattr(inner, "capabilities", None), "name", "unknown")

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        if name not in _TRACED:
            return super()._forward(name, *args, **kwargs)
        tracer = telemetry.get_tracer()
        with tracer.start_as_current_span(
            telemetry.STORE_PREFIX + name,
            kind=SpanKind.CLIENT,
            record_exception=False,
        ) as span:
            span.set_attribute("db.system.name", self._system)
            span.set_attribute("db.operation.name", name)
            if args and isinstance(args[0], str):
                span.set_attribute("hindsight.namespace", args[0])
            try:
                result = super()._forward(name, *args, **kwargs)
            except Exception as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)[:200]))
                raise
            if isinstance(result, (list, int)) and not isinstance(result, bool):
                size = result if isinstance(result, int) else len(result)
                span.set_attribute("db.response.returned_rows", size)
            return result


def traced(backend: MemoryBackend) -> MemoryBackend:
    """``backend`` with a span per store call (never wraps twice)."""
    if isinstance(backend, TracedBackend):
        return backend
    return TracedBackend(backend)
