"""Find the LangGraph run a memory span belongs to when no OTel span is active.

OpenInference's LangChain instrumentation keeps its spans per LangChain run
and, by design, never makes them the current OpenTelemetry span (attaching
context from callbacks is unsafe), so a span started inside a LangGraph node
would otherwise begin a trace of its own. The instrumentation exposes the
running node's span through ``get_current_span()``: memory spans use it as
their parent. It is looked up only if the application already imported the
instrumentation: the library imports nothing and configures nothing.

LangSmith's own tracer in OTel mode creates its spans later, from batched run
events, with ids of their own, so there is no span to hang under while a node
runs; ``docs/observability.md`` shows the LangSmith recipe that nests.
"""

from __future__ import annotations

import sys

from opentelemetry import trace
from opentelemetry.trace import Span


def parent_span() -> Span | None:
    """The active span, else the running LangGraph node's span, else ``None``."""
    current = trace.get_current_span()
    if current.get_span_context().is_valid:
        return current
    return _openinference_span()


def _openinference_span() -> Span | None:
    module = sys.modules.get("openinference.instrumentation.langchain")
    finder = getattr(module, "get_current_span", None)
    if finder is None:
        return None
    try:
        span = finder()
    except Exception:  # a tracer's internals must never break a recall
        return None
    return span if isinstance(span, Span) else None
