"""The telemetry module: spans, degradations, collected values, log correlation."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
import structlog

from hindsight_lg import telemetry
from hindsight_lg.testing import capture_spans


def test_memory_span_sets_genai_and_openinference_attributes() -> None:
    """A memory operation span carries its GenAI operation and OpenInference kind."""
    with capture_spans() as spans:
        with telemetry.memory_span(
            telemetry.RECALL, telemetry.SEARCH_MEMORY, namespace="u1", agent="a1"
        ):
            pass
    attrs = dict(spans[0].attributes or {})
    assert attrs["gen_ai.operation.name"] == "search_memory"
    assert attrs["openinference.span.kind"] == "RETRIEVER"
    assert (attrs["hindsight.namespace"], attrs["gen_ai.agent.id"]) == ("u1", "a1")


def test_inner_steps_default_to_chain() -> None:
    """A step without an operation is a CHAIN span with no GenAI operation."""
    with capture_spans() as spans:
        with telemetry.memory_span(telemetry.ENCODE):
            pass
    attrs = dict(spans[0].attributes or {})
    assert attrs["openinference.span.kind"] == "CHAIN"
    assert "gen_ai.operation.name" not in attrs


def test_memory_span_records_errors_and_reraises() -> None:
    """An exception inside a span marks it as an error and still propagates."""
    with capture_spans() as spans, pytest.raises(ValueError, match="boom"):
        with telemetry.memory_span(telemetry.CAPTURE, telemetry.CREATE_MEMORY):
            raise ValueError("boom")
    assert spans[0].status.is_ok is False
    assert [e.name for e in spans[0].events] == ["exception"]


def test_set_attributes_converts_values_otel_cannot_hold() -> None:
    """Dicts become JSON, odd objects strings, and None values are skipped."""
    with capture_spans() as spans:
        with telemetry.memory_span("x") as span:
            telemetry.set_attributes(
                span, {"paths": {"dense": 0.5}, "ids": [1, object], "gone": None}
            )
    attrs = dict(spans[0].attributes or {})
    assert json.loads(attrs["hindsight.paths"]) == {"dense": 0.5}
    assert attrs["hindsight.ids"][0] == 1
    assert "hindsight.gone" not in attrs


def test_degrade_adds_an_event_with_its_reason() -> None:
    """A degradation becomes a hindsight.<what> event with the reason on the span."""
    with capture_spans() as spans:
        with telemetry.memory_span(telemetry.CAPTURE):
            telemetry.degrade(telemetry.SPOOL, "store unavailable", queued=3)
    [event] = spans[0].events
    assert event.name == "hindsight.spool"
    assert dict(event.attributes or {}) == {
        "hindsight.reason": "store unavailable",
        "hindsight.queued": 3,
    }


def test_collect_reaches_only_the_enclosing_block() -> None:
    """Values collected inside a block land in it; outside any block they vanish."""
    telemetry.collect("ids", "lost")
    with telemetry.collecting() as outer:
        telemetry.collect("ids", "a")
        with telemetry.collecting() as inner:
            telemetry.collect("ids", "b")
        telemetry.collect("ids", "c")
    assert (outer, inner) == ({"ids": ["a", "c"]}, {"ids": ["b"]})


def test_document_attributes_follow_openinference_names() -> None:
    """Documents become <prefix>.{i}.document.{id,score,content,metadata}."""
    attrs = telemetry.document_attributes(
        "retrieval.documents",
        [{"id": "m1", "score": 0.5, "content": "tea", "metadata": {"k": 1}}],
    )
    assert attrs == {
        "retrieval.documents.0.document.id": "m1",
        "retrieval.documents.0.document.score": 0.5,
        "retrieval.documents.0.document.content": "tea",
        "retrieval.documents.0.document.metadata": '{"k": 1}',
    }


def _render_json(**fields: Any) -> dict[str, Any]:
    processors: list[Any] = [telemetry.add_trace_context]
    logger = structlog.wrap_logger(
        structlog.ReturnLogger(),
        processors=[*processors, structlog.processors.JSONRenderer()],
    )
    line = logger.info("recalled", **fields)
    return dict(json.loads(line))


def test_log_events_carry_the_ids_of_the_current_span() -> None:
    """Inside a real SDK span, structlog JSON lines carry its trace and span ids."""
    with capture_spans() as spans:
        with telemetry.memory_span(telemetry.RECALL, telemetry.SEARCH_MEMORY):
            event = _render_json(count=2)
    ctx = spans[0].get_span_context()
    assert ctx is not None
    assert event["trace_id"] == format(ctx.trace_id, "032x")
    assert event["span_id"] == format(ctx.span_id, "016x")
    assert event["count"] == 2


def test_log_events_outside_spans_have_no_trace_ids() -> None:
    """Outside any span the processor adds nothing."""
    assert "trace_id" not in _render_json()


def test_importing_the_library_configures_nothing_global() -> None:
    """Importing hindsight_lg installs no tracer provider and leaves structlog alone."""
    code = (
        "import structlog; from opentelemetry import trace; import hindsight_lg;"
        "import hindsight_lg.telemetry;"
        "print(structlog.is_configured(),"
        " type(trace.get_tracer_provider()).__name__)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "ProxyTracerProvider"]
