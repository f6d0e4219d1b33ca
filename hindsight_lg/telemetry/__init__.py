"""Tracing and log correlation. The library only uses the OpenTelemetry *API*.

Spans follow the GenAI memory conventions (``gen_ai.operation.name`` =
``search_memory``, ``create_memory``, ``update_memory``, ``delete_memory``)
and carry OpenInference attributes (``openinference.span.kind``,
``retrieval.documents.*``, ``embedding.*``, ``reranker.*``) so Arize Phoenix
renders a recall as a retriever. Nothing here installs a tracer provider or
configures structlog: applications do that (see ``docs/observability.md``),
and :func:`add_trace_context` is the processor they add to their structlog chain.

The span tree of one recall::

    hindsight.recall            RETRIEVER  search_memory
      hindsight.embed           EMBEDDING
      hindsight.recall.dense    RETRIEVER  (hindsight.store.search_dense inside)
      hindsight.recall.lexical  RETRIEVER  (one per probe: text, entity)
      hindsight.recall.recency  RETRIEVER
      hindsight.recall.time     RETRIEVER  (only with a time phrase)
      hindsight.recall.graph    RETRIEVER  (hindsight.store.edges per hop)
      hindsight.rerank          RERANKER   (only with a reranker)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import structlog
from opentelemetry import trace
from opentelemetry.trace import Span, Status, StatusCode

from hindsight_lg.telemetry._parent import parent_span as parent_span

TRACER_NAME = "hindsight_lg"

# Span names: one per public operation, one per pipeline stage and recall path.
RECALL = "hindsight.recall"
RECALL_DENSE = "hindsight.recall.dense"
RECALL_LEXICAL = "hindsight.recall.lexical"
RECALL_RECENCY = "hindsight.recall.recency"
RECALL_TIME = "hindsight.recall.time"
RECALL_GRAPH = "hindsight.recall.graph"
CAPTURE = "hindsight.capture"
ENCODE = "hindsight.encode"
EMBED = "hindsight.embed"
RERANK = "hindsight.rerank"
MERGE = "hindsight.merge"
SUPERSEDE = "hindsight.supersede"
WRITE = "hindsight.write"
STORE_PREFIX = "hindsight.store."
UPDATE = "hindsight.update"
FORGET = "hindsight.forget"
DECAY = "hindsight.decay"
CONSOLIDATE = "hindsight.consolidate"
REFLECT = "hindsight.reflect"

# GenAI ``gen_ai.operation.name`` values for memory.
SEARCH_MEMORY = "search_memory"
CREATE_MEMORY = "create_memory"
UPDATE_MEMORY = "update_memory"
DELETE_MEMORY = "delete_memory"

# OpenInference span kinds.
RETRIEVER = "RETRIEVER"
EMBEDDING = "EMBEDDING"
RERANKER = "RERANKER"
CHAIN = "CHAIN"

# Degradations, recorded as span events named ``hindsight.<what>``.
TIMEOUT = "timeout"
FALLBACK = "fallback"
SPOOL = "spool"

_KIND_BY_OPERATION = {SEARCH_MEMORY: RETRIEVER}
_MAX_TEXT = 500  # characters of memory text per attribute: enough to read, not a dump
_collected: ContextVar[dict[str, list[Any]] | None] = ContextVar(
    "hindsight_collected", default=None
)


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
        attributes: ``hindsight.*`` attributes (keys with a dot are used as
            given); ``None`` values are skipped.

    Example:
        >>> with memory_span(RECALL, SEARCH_MEMORY, namespace="u42") as span:
        ...     span.set_attribute("hindsight.count", 0)
    """
    parent = parent_span()
    context = trace.set_span_in_context(parent) if parent is not None else None
    with get_tracer().start_as_current_span(
        name, context=context, record_exception=False
    ) as span:
        if operation:
            span.set_attribute("gen_ai.operation.name", operation)
            span.set_attribute("gen_ai.provider.name", "hindsight")
            span.set_attribute("gen_ai.system", "hindsight")  # pre-1.37 tools read it
        span.set_attribute(
            "openinference.span.kind",
            kind or _KIND_BY_OPERATION.get(operation or "", CHAIN),
        )
        set_attributes(span, _with_genai_aliases(attributes))
        try:
            yield span
        except BaseException as exc:
            span.record_exception(exc)
            span.set_status(Status(StatusCode.ERROR, str(exc)[:200]))
            raise


def _with_genai_aliases(attributes: Mapping[str, Any]) -> dict[str, Any]:
    # The GenAI conventions name the agent; ours stays too, since dashboards
    # built on hindsight.* should not have to change. The conventions' memory
    # attributes are not released yet (semconv 0.66 has none): only the
    # released names are used, so no tool is taught a name that may change.
    out = dict(attributes)
    if attributes.get("agent"):
        out.setdefault("gen_ai.agent.id", attributes["agent"])
    return out


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
        elif isinstance(value, dict):
            value = json.dumps(value, ensure_ascii=False, default=str)
        elif not isinstance(value, (str, int, float, bool)):
            value = str(value)
        span.set_attribute(name, value)


def current_span() -> Span:
    """The active span (a no-op one outside any trace)."""
    return trace.get_current_span()


def degrade(
    what: str,
    reason: str,
    span: Span | None = None,
    *,
    log: bool = True,
    log_event: str | None = None,
    **detail: Any,
) -> None:
    """Record a degradation (timeout, fallback, spool) as a span event, and log it.

    The event is named ``hindsight.<what>`` and carries ``hindsight.reason``;
    the warning log line carries the same words, and the trace ids when the
    application put :func:`add_trace_context` in its structlog chain. Outside
    any recording span a short ``hindsight.<what>`` span carries the event, so
    a degradation is never missing from the trace.

    Args:
        what: :data:`TIMEOUT`, :data:`FALLBACK`, :data:`SPOOL` or another word.
        reason: why, in words a developer reading the trace understands.
        span: the span to annotate; the current one by default.
        log: also log a warning (off for expected, per-call fallbacks).
        log_event: the log event name; ``degraded_<what>`` by default.
        detail: extra ``hindsight.*`` event attributes.
    """
    attrs: dict[str, Any] = {"hindsight.reason": reason}
    for key, value in detail.items():
        if value is not None:
            attrs[key if "." in key else f"hindsight.{key}"] = (
                value if isinstance(value, (str, int, float, bool)) else str(value)
            )
    target = span if span is not None else trace.get_current_span()
    if target.is_recording():
        _mark(target, what, attrs)
    else:
        with memory_span(f"hindsight.{what}") as own:
            _mark(own, what, attrs)
    if log:
        try:
            get_logger().warning(
                log_event or f"degraded_{what}", reason=reason, **detail
            )
        except Exception:  # reporting a degradation must never add a failure
            pass


def _mark(span: Span, what: str, attrs: dict[str, Any]) -> None:
    span.add_event(f"hindsight.{what}", attrs)
    span.set_attribute("hindsight.degraded", True)


@contextmanager
def collecting() -> Iterator[dict[str, list[Any]]]:
    """Gather values that inner steps :func:`collect` for an outer span.

    Capture's span reports the ids its merge and supersede steps touched,
    though those steps run deep inside the write path.
    """
    bag: dict[str, list[Any]] = {}
    token = _collected.set(bag)
    try:
        yield bag
    finally:
        _collected.reset(token)


def collect(key: str, *values: Any) -> None:
    """Add values under ``key`` for the enclosing :func:`collecting` block, if any."""
    bag = _collected.get()
    if bag is not None:
        bag.setdefault(key, []).extend(values)


def document_attributes(
    prefix: str, documents: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """OpenInference document attributes: ``<prefix>.{i}.document.{id,score,content,metadata}``.

    Args:
        prefix: ``retrieval.documents``, ``reranker.input_documents`` or
            ``reranker.output_documents``.
        documents: mappings with ``id``, ``score``, ``content`` and, optionally,
            ``metadata`` (a dict, stored as JSON as OpenInference asks).
    """
    out: dict[str, Any] = {}
    for i, doc in enumerate(documents):
        base = f"{prefix}.{i}.document"
        out[f"{base}.id"] = str(doc["id"])
        if doc.get("score") is not None:
            out[f"{base}.score"] = float(doc["score"])
        out[f"{base}.content"] = str(doc.get("content", ""))[:_MAX_TEXT]
        if doc.get("metadata"):
            out[f"{base}.metadata"] = json.dumps(
                doc["metadata"], ensure_ascii=False, default=str
            )
    return out


def embedding_attributes(model_name: str, texts: Sequence[str]) -> dict[str, Any]:
    """OpenInference embedding attributes: model name and the embedded texts."""
    out: dict[str, Any] = {"embedding.model_name": model_name, "count": len(texts)}
    for i, text in enumerate(texts[:16]):  # the first few say what was embedded
        out[f"embedding.embeddings.{i}.embedding.text"] = text[:_MAX_TEXT]
    return out


def add_trace_context(
    logger: Any, method: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: add ``trace_id`` and ``span_id`` of the current span.

    Inside a LangGraph node traced by OpenInference's LangChain instrumentation,
    the node's span counts as the current one.

    Example:
        >>> import structlog
        >>> structlog.configure(processors=[add_trace_context,
        ...     structlog.processors.JSONRenderer()])  # doctest: +SKIP
    """
    span = parent_span()
    ctx = span.get_span_context() if span is not None else None
    if ctx is not None and ctx.is_valid:
        event_dict.setdefault("trace_id", format(ctx.trace_id, "032x"))
        event_dict.setdefault("span_id", format(ctx.span_id, "016x"))
    return event_dict
