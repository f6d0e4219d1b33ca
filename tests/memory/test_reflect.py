"""Reflection: heuristic judgement, validated model answers, lessons kept unverified."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from hindsight_lg import HindsightMemory, Kind
from hindsight_lg.memory.lifecycle.reflect import Reflection, reflect, reflect_later
from hindsight_lg.testing import (
    FakeToolChatModel,
    HashingEmbedder,
    InMemoryBackend,
    tool_call,
)


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def _fact(memory: HindsightMemory, text: str) -> str:
    return memory.remember(text, namespace="u1", kind="fact").id


def test_used_memory_is_reinforced_and_lesson_unverified(
    memory: HindsightMemory,
) -> None:
    """A memory echoed in the answer is reinforced; the lesson has confidence 0.6."""
    used = _fact(memory, "The user lives in Porto, Portugal")
    run = [HumanMessage("Where do I live?"), AIMessage("You live in Porto, Portugal.")]
    before = memory.get("u1", used)
    result = reflect(memory, run, namespace="u1", recalled_ids=[used])
    after = memory.get("u1", used)
    assert before is not None and after is not None
    assert result.used == [used] and result.source == "heuristic"
    assert after.access_count == before.access_count + 1
    lesson = memory.get("u1", result.experience_id or "")
    assert lesson is not None and lesson.kind is Kind.EXPERIENCE
    assert (lesson.confidence, lesson.meta["verified"]) == (pytest.approx(0.6), False)


def test_corrected_memory_is_weakened(memory: HindsightMemory) -> None:
    """A used memory followed by a user correction counts as misleading."""
    wrong = _fact(memory, "The user lives in Porto, Portugal")
    run = [
        HumanMessage("Where do I live?"),
        AIMessage("You live in Porto, Portugal."),
        HumanMessage("That's wrong, I moved to Lyon."),
        AIMessage("Noted."),
    ]
    before = memory.get("u1", wrong)
    result = reflect(memory, run, namespace="u1", recalled_ids=[wrong])
    after = memory.get("u1", wrong)
    assert result.misleading == [wrong]
    assert before is not None and after is not None
    assert after.importance < before.importance


def test_same_lesson_twice_confirms_instead_of_duplicating(
    memory: HindsightMemory,
) -> None:
    """A second matching reflection reinforces the first lesson, writing none."""
    used = _fact(memory, "The user lives in Porto, Portugal")
    run = [HumanMessage("Where do I live?"), AIMessage("You live in Porto, Portugal.")]
    first = reflect(memory, run, namespace="u1", recalled_ids=[used])
    second = reflect(memory, run, namespace="u1", recalled_ids=[used])
    assert second.confirmed and second.experience_id == first.experience_id
    assert len(memory.list_memories("u1", kinds=["experience"])) == 1


def test_valid_model_answer_is_used(memory: HindsightMemory) -> None:
    """A structured answer naming shown ids drives the outcome."""
    used = _fact(memory, "The user lives in Porto, Portugal")
    answer = {
        "used": [used],
        "misleading": [],
        "missed": [],
        "lesson": "Ask city first.",
    }
    llm = FakeToolChatModel(responses=[tool_call("ReflectionAnswer", answer)])
    run = [HumanMessage("Where do I live?"), AIMessage("Somewhere nice.")]
    result = reflect(memory, run, namespace="u1", recalled_ids=[used], llm=llm)
    assert (result.source, result.used, result.lesson) == (
        "llm",
        [used],
        "Ask city first.",
    )


def test_invalid_model_answer_falls_back_to_heuristics(memory: HindsightMemory) -> None:
    """An answer naming ids it was not shown is rejected for the heuristics."""
    used = _fact(memory, "The user lives in Porto, Portugal")
    bogus = {"used": ["not-an-id"], "misleading": [], "missed": [], "lesson": "x"}
    llm = FakeToolChatModel(responses=[tool_call("ReflectionAnswer", bogus)])
    run = [HumanMessage("Where do I live?"), AIMessage("You live in Porto, Portugal.")]
    result = reflect(memory, run, namespace="u1", recalled_ids=[used], llm=llm)
    assert (result.source, result.used) == ("heuristic", [used])


def test_reflect_later_runs_on_the_worker_and_flush_waits(
    memory: HindsightMemory,
) -> None:
    """reflect_later returns at once; after flush the lesson is stored and reported."""
    used = memory.remember("I love jasmine tea", namespace="u1").id
    run = [HumanMessage("Which tea?"), AIMessage("You love jasmine tea.")]
    got: list[Reflection] = []
    reflect_later(memory, run, namespace="u1", recalled_ids=[used], on_done=got.append)
    memory.flush()
    assert len(got) == 1 and got[0].used == [used]
    assert memory.list_memories("u1", kinds=["experience"])
