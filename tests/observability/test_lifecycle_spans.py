"""Consolidation, decay and reflection are spans too, with what they changed."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from opentelemetry.sdk.trace import ReadableSpan

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.jobs.reflect import reflect
from hindsight_lg.testing import capture_spans


def _attrs(spans: list[ReadableSpan], name: str) -> dict[str, Any]:
    [span] = [s for s in spans if s.name == name]
    return dict(span.attributes or {})


def test_reflection_span_names_used_memories_and_the_lesson(
    memory: HindsightMemory,
) -> None:
    """The reflect span lists the memories judged useful and missed, and the lesson."""
    used = memory.remember(
        "The user lives in Porto, Portugal", namespace="u1", kind="fact"
    ).id
    missed = memory.remember(
        "The user is allergic to peanuts and shellfish", namespace="u1", kind="fact"
    ).id
    run = [
        HumanMessage(
            "Where do I live? I'm allergic to peanuts and shellfish, remember"
        ),
        AIMessage("You live in Porto, Portugal."),
    ]
    with capture_spans() as spans:
        result = reflect(memory, run, namespace="u1", recalled_ids=[used])
    attrs = _attrs(spans, "hindsight.reflect")
    assert list(attrs["hindsight.used_ids"]) == [used]
    assert list(attrs["hindsight.missed_ids"]) == [missed]
    assert attrs["hindsight.judged_by"] == "heuristic"
    assert attrs["output.value"] == result.lesson


def test_decay_and_consolidate_are_memory_operations(memory: HindsightMemory) -> None:
    """Decay is an update_memory span and consolidation a create_memory span."""
    memory.capture("I went hiking with Ana on Saturday", namespace="u1")
    with capture_spans() as spans:
        memory.decay("u1")
        memory.consolidate("u1")
    assert _attrs(spans, "hindsight.decay")["gen_ai.operation.name"] == "update_memory"
    consolidate = _attrs(spans, "hindsight.consolidate")
    assert consolidate["gen_ai.operation.name"] == "create_memory"
    assert consolidate["hindsight.namespace"] == "u1"
