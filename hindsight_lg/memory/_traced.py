"""A backend wrapper that puts each store call in its own client span.

The engine's recall and write paths talk to the store through it, so a trace
shows which Milvus calls a recall or a capture made and how long each took.
Other attributes and methods pass through untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

from opentelemetry.trace import SpanKind, Status, StatusCode

from hindsight_lg import telemetry
from hindsight_lg.backends.base import MemoryBackend

# Calls worth a span: the ones that reach the database on a recall or a write.
_TRACED = (
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
)


class TracedBackend:
    """Wraps a :class:`~hindsight_lg.backends.base.MemoryBackend`; same interface."""

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner
        system = getattr(getattr(inner, "capabilities", None), "name", "unknown")
        for name in _TRACED:
            if hasattr(inner, name):
                setattr(self, name, _traced_call(name, getattr(inner, name), system))

    def __getattr__(self, name: str) -> Any:
        # Only reached for names not set in __init__: capabilities, setup, ...
        return getattr(self.inner, name)


def _traced_call(name: str, method: Callable[..., Any], system: str) -> Any:
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        tracer = telemetry.get_tracer()
        with tracer.start_as_current_span(
            telemetry.STORE_PREFIX + name,
            kind=SpanKind.CLIENT,
            record_exception=False,
        ) as span:
            span.set_attribute("db.system.name", system)
            span.set_attribute("db.operation.name", name)
            if args and isinstance(args[0], str):
                span.set_attribute("hindsight.namespace", args[0])
            try:
                result = method(*args, **kwargs)
            except Exception as exc:
                span.record_exception(exc)
                span.set_status(Status(StatusCode.ERROR, str(exc)[:200]))
                raise
            if isinstance(result, (list, int)) and not isinstance(result, bool):
                size = result if isinstance(result, int) else len(result)
                span.set_attribute("db.response.returned_rows", size)
            return result

    return call


def traced(backend: MemoryBackend) -> MemoryBackend:
    """``backend`` with a span per store call (never wraps twice)."""
    if isinstance(backend, TracedBackend):
        return cast(MemoryBackend, backend)
    return cast(MemoryBackend, TracedBackend(backend))
