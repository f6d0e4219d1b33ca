"""Memory spans nest under LangGraph's spans from OpenInference's instrumentation."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import structlog
from langgraph.graph import START, MessagesState, StateGraph
from opentelemetry.sdk.trace import ReadableSpan

from hindsight_lg import HindsightMemory, telemetry
from hindsight_lg.testing import capture_spans

langchain_instrumentation = pytest.importorskip(
    "openinference.instrumentation.langchain",
    reason="pip install 'hindsight-lg[otel]' for OpenInference's LangChain tracer",
)


@contextmanager
def instrumented() -> Iterator[list[ReadableSpan]]:
    """Spans of a block run with OpenInference's LangChain instrumentation on.

    The list fills when the block ends.
    """
    instrumentor = langchain_instrumentation.LangChainInstrumentor()
    with capture_spans() as spans:
        instrumentor.instrument()
        try:
            yield spans
        finally:
            instrumentor.uninstrument()


def _graph(memory: HindsightMemory, logged: list[dict[str, Any]]) -> Any:
    def recall(state: MessagesState) -> dict[str, Any]:
        memory.recall("green tea", namespace="u1", timeout=None)
        logged.append(telemetry.add_trace_context(None, "info", {}))  # type: ignore[arg-type]
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("recall", recall)
    builder.add_edge(START, "recall")
    return builder.compile()


def test_recall_span_is_a_child_of_the_node_span(memory: HindsightMemory) -> None:
    """Inside a traced LangGraph node, the recall span's parent is that node's span."""
    memory.capture("I prefer green tea", namespace="u1")
    with instrumented() as spans:
        _graph(memory, []).invoke({"messages": [("user", "tea?")]})
    by_name = {s.name: s for s in spans}
    node, recall = by_name["recall"], by_name["hindsight.recall"]
    assert node.context is not None and recall.parent is not None
    assert recall.parent.span_id == node.context.span_id
    assert recall.context is not None
    assert recall.context.trace_id == node.context.trace_id


def test_log_lines_in_a_node_carry_the_node_span(memory: HindsightMemory) -> None:
    """A log line written in a traced node carries the node span's ids."""
    logged: list[dict[str, Any]] = []
    with instrumented() as spans:
        _graph(memory, logged).invoke({"messages": [("user", "tea?")]})
    node = next(s for s in spans if s.name == "recall")
    assert node.context is not None
    assert logged[0]["span_id"] == format(node.context.span_id, "016x")


def test_outside_any_run_memory_spans_start_their_own_trace(
    memory: HindsightMemory,
) -> None:
    """With no active span and no LangGraph run, a recall span is a root."""
    structlog.get_logger()  # nothing configured: the library must not need it
    with capture_spans() as spans:
        memory.recall("green tea", namespace="u1")
    recall = next(s for s in spans if s.name == "hindsight.recall")
    assert recall.parent is None


def test_background_capture_joins_the_submitters_trace(
    memory: HindsightMemory,
) -> None:
    """A turn submitted inside a span is captured later under that same span."""
    with capture_spans() as spans:
        with telemetry.memory_span("turn") as turn:
            memory.submit("I prefer green tea over coffee", namespace="u1")
        memory.flush()
    capture = next(s for s in spans if s.name == "hindsight.capture")
    assert capture.parent is not None
    assert capture.parent.span_id == turn.get_span_context().span_id


def test_background_capture_nests_under_the_capture_node(
    memory: HindsightMemory,
) -> None:
    """Submitted from a traced LangGraph node, the capture nests under that node."""

    def capture(state: MessagesState) -> dict[str, Any]:
        memory.submit("I prefer green tea over coffee", namespace="u1")
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("capture", capture)
    builder.add_edge(START, "capture")
    with instrumented() as spans:
        builder.compile().invoke({"messages": [("user", "tea")]})
        memory.flush()
    node = next(s for s in spans if s.name == "capture")
    written = next(s for s in spans if s.name == "hindsight.capture")
    assert node.context is not None and written.parent is not None
    assert written.parent.span_id == node.context.span_id
