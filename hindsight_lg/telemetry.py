"""Tracing and log correlation. The library only uses the OpenTelemetry *API*.

Spans follow the GenAI memory conventions (``gen_ai.operation.name`` =
``search_memory``, ``create_memory``, ``update_memory``, ``delete_memory``)
and carry ``openinference.span.kind`` so Arize Phoenix renders a recall as a
retriever. Nothing here installs a tracer provider or configures structlog:
applications do that (see ``docs/observability.md``), and
:func:`add_trace_context` is the processor they add to their structlog chain.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import Any

import structlog
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

TRACER_NAME = "hindsight_lg"

# Span names: one per public operation, one per recall path.
RECALL = "hindsight.recall"
CAPTURE = "hindsight.capture"
ENCODE = "hindsight.encode"
EMBED = "hindsight.embed"
RERANK = "hindsight.rerank"
STORE_WRITE = "hindsight.store.write"
UPDATE = "hindsight.update"
FORGET = "hindsight.forget"
DECAY = "hindsight.decay"
CONSOLIDATE = "hindsight.consolidate"
REFLECT = "hindsight.reflect"

SEARCH_MEMORY = "search_memory"
CREATE_MEMORY = "create_memory"
UPDATE_MEMORY = "update_memory"
DELETE_MEMORY = "delete_memory"

_KIND_BY_OPERATION = {SEARCH_MEMORY: "RETRIEVER"}


def get_tracer() -> trace.Tracer:
    """The library's tracer, from whatever provider the application installed."""
    return trace.get_tracer(TRACER_NAME)


def get_logger(**bound: Any) -> Any:
    """A structlog logger named for the library; configuration is the app's."""
    return structlog.get_logger(TRACER_NAME).bind(**bound)


@contextmanager
def memory_span(
    name: str,
    operation: str | None = None,
    *,
    kind: str | None = None,
    **attributes: Any,
) -> Iterator[Span]:
    """A span for one memory operation, recording errors on the way out.

    Args:
        name: the span name (one of the constants above).
        operation: GenAI ``gen_ai.operation.name``; ``None`` for inner steps.
        kind: ``openinference.span.kind``; defaults by operation (RETRIEVER for
            search, CHAIN otherwise).
        attributes: ``hindsight.*`` attributes; ``None`` values are skipped.
    """
    with get_tracer().start_as_current_span(name, record_exception=False) as span:
        if operation:
            span.set_attribute("gen_ai.operation.name", operation)
            span.set_attribute("gen_ai.system", "hindsight")
        span.set_attribute(
            "openinference.span.kind",
            kind or _KIND_BY_OPERATION.get(operation or "", "CHAIN"),
        )
        set_attributes(span, attributes)
        try:
            yield span
        except BaseException as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)[:200]))
            raise


def set_attributes(span: Span, attributes: Mapping[str, Any]) -> None:
    """Set ``hindsight.<key>`` attributes (keys with a dot are used as given)."""
    for key, value in attributes.items():
        if value is None:
            continue
        name = key if "." in key else f"hindsight.{key}"
        if isinstance(value, (list, tuple)):
            value = [
                v if isinstance(v, (str, int, float, bool)) else str(v) for v in value
            ]
        elif not isinstance(value, (str, int, float, bool)):
            value = str(value)
        span.set_attribute(name, value)


def add_trace_context(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: add ``trace_id`` and ``span_id`` of the current span.

    Example:
        >>> import structlog
        >>> structlog.configure(processors=[add_trace_context,
        ...     structlog.processors.JSONRenderer()])  # doctest: +SKIP
    """
    ctx = trace.get_current_span().get_span_context()
    if ctx.is_valid:
        event_dict.setdefault("trace_id", format(ctx.trace_id, "032x"))
        event_dict.setdefault("span_id", format(ctx.span_id, "016x"))
    return event_dict
