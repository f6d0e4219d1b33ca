"""Find the LangGraph run a memory span belongs to when no OTel span is active.

Two tracers that applications use for LangGraph do not make their spans the
current OpenTelemetry span while a node runs, so a span started inside a
node would otherwise begin a trace of its own:

* OpenInference's LangChain instrumentation keeps its spans per run and says
  so (attaching context from callbacks is unsafe); it exposes the span of the
  running node through ``get_current_span()``.
* LangSmith in OTel mode derives span ids from its run ids, so the current
  run tree names the span to hang under.

Both are looked up only if the application already imported them: the
library imports neither and configures nothing.
"""

from __future__ import annotations

import sys
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan, Span, SpanContext, TraceFlags


def parent_span() -> Span | None:
    """The active span, else the running LangGraph node's span, else ``None``."""
    current = trace.get_current_span()
    if current.get_span_context().is_valid:
        return current
    return _openinference_span() or _langsmith_span()


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


def _langsmith_span() -> Span | None:
    helpers = sys.modules.get("langsmith.run_helpers")
    if helpers is None:
        return None
    try:
        run: Any = helpers.get_current_run_tree()
        if run is None or getattr(run.client, "otel_exporter", None) is None:
            return None
        from langsmith._internal._otel_utils import (
            get_otel_span_id_from_uuid,
            get_otel_trace_id_from_uuid,
        )

        ctx = SpanContext(
            trace_id=get_otel_trace_id_from_uuid(run.trace_id),
            span_id=get_otel_span_id_from_uuid(run.id),
            is_remote=False,
            trace_flags=TraceFlags(TraceFlags.SAMPLED),
        )
    except Exception:  # private API of another package: fail closed
        return None
    return NonRecordingSpan(ctx)
