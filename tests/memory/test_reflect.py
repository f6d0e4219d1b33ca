"""Reflection: heuristic judgement, validated model answers, lessons kept unverified."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from hindsight_lg import HindsightMemory, Kind
from hindsight_lg.memory.jobs.reflect import Reflection, reflect, reflect_later
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


CORRECTED = [
    HumanMessage("Where do I live?"),
    AIMessage("You live in Porto, Portugal."),
    HumanMessage("That's wrong, I moved to Lyon."),
    AIMessage("Noted."),
]


def test_used_memory_is_reinforced_without_a_lesson(memory: HindsightMemory) -> None:
    """A memory echoed in the answer is reinforced; with no evidence, no lesson."""
    used = _fact(memory, "The user lives in Porto, Portugal")
    run = [HumanMessage("Where do I live?"), AIMessage("You live in Porto, Portugal.")]
    before = memory.get("u1", used)
    result = reflect(memory, run, namespace="u1", recalled_ids=[used])
    after = memory.get("u1", used)
    assert before is not None and after is not None
    assert result.used == [used] and result.source == "heuristic"
    assert after.access_count == before.access_count + 1
    assert (result.lesson, result.experience_id) == ("", None)
    assert memory.list_memories("u1", kinds=["experience"]) == []


def test_a_corrected_run_keeps_an_unverified_lesson(memory: HindsightMemory) -> None:
    """The lesson names the corrected memory and has confidence 0.6, unverified."""
    wrong = _fact(memory, "The user lives in Porto, Portugal")
    result = reflect(memory, CORRECTED, namespace="u1", recalled_ids=[wrong])
    lesson = memory.get("u1", result.experience_id or "")
    assert lesson is not None and lesson.kind is Kind.EXPERIENCE
    assert (lesson.confidence, lesson.meta["verified"]) == (pytest.approx(0.6), False)
    assert lesson.content == (
        "For requests like 'Where do I live?': do not trust "
        "'The user lives in Porto, Portugal': the user corrected it."
    )


def test_a_correction_judges_what_the_corrected_answer_was_given(
    memory: HindsightMemory,
) -> None:
    """The correcting turn recalled nothing; the previous run's memories are judged."""
    wrong = _fact(memory, "The user lives in Porto, Portugal")
    plain = [
        HumanMessage("Where do I live?"),
        AIMessage("You live in Porto, Portugal."),
    ]
    calm = reflect(memory, plain, namespace="u1", answered_ids=[wrong])
    fixed = reflect(memory, CORRECTED, namespace="u1", answered_ids=[wrong])
    # Without a correction the previous run's memories are not judged again.
    assert (calm.used, calm.misleading, fixed.misleading) == ([], [], [wrong])


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
    first = reflect(memory, CORRECTED, namespace="u1", recalled_ids=[used])
    second = reflect(memory, CORRECTED, namespace="u1", recalled_ids=[used])
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
    used = memory.remember("The user lives in Porto, Portugal", namespace="u1").id
    got: list[Reflection] = []
    reflect_later(
        memory, CORRECTED, namespace="u1", recalled_ids=[used], on_done=got.append
    )
    memory.flush()
    assert len(got) == 1 and got[0].misleading == [used]
    assert memory.list_memories("u1", kinds=["experience"])


def test_no_lesson_about_what_the_run_itself_captured(memory: HindsightMemory) -> None:
    """The run's own capture is never 'missed', even when reflection runs after it."""
    said = HumanMessage("My dog is called Pixel and he is a beagle.", id="h1")
    memory.capture([said], namespace="u1")
    run = [said, AIMessage("Nice to meet Pixel!", id="a1")]
    result = reflect(memory, run, namespace="u1", recalled_ids=[])
    assert (result.missed, result.lesson, result.experience_id) == ([], "", None)


def test_a_memory_the_user_had_to_restate_is_a_missed_lesson(
    memory: HindsightMemory,
) -> None:
    """An older memory, not recalled, repeated by the user, gives a 'recall' lesson."""
    old = _fact(memory, "The user is allergic to peanuts and shellfish")
    run = [
        HumanMessage("Plan dinner. Remember I'm allergic to peanuts and shellfish!"),
        AIMessage("Here is a plan."),
    ]
    result = reflect(memory, run, namespace="u1", recalled_ids=[])
    assert result.missed == [old]
    assert "the user had to repeat it" in result.lesson
    assert result.lesson.startswith('For requests like "Plan dinner.')


def test_loosely_related_memories_write_no_lesson(memory: HindsightMemory) -> None:
    """A weather answer that mentions Paris does not make a lesson of unrelated facts."""
    fact = _fact(memory, "I'm vegetarian and I live in Paris.")
    run = [HumanMessage("What's the weather like?"), AIMessage("Sunny in Paris.")]
    result = reflect(memory, run, namespace="u1", recalled_ids=[fact])
    assert (result.lesson, result.experience_id) == ("", None)


def test_lessons_are_never_empty_after_the_colon(memory: HindsightMemory) -> None:
    """Whatever the run, a written lesson says something after 'For requests like ...:'."""
    _fact(memory, "The user lives in Porto, Portugal")
    for run in (
        [HumanMessage("Hi there")],
        [HumanMessage("Where do I live?"), AIMessage("No idea.")],
        CORRECTED,
    ):
        lesson = reflect(memory, run, namespace="u1").lesson
        assert lesson == "" or not lesson.rstrip().endswith(":")


def test_a_repeated_question_is_not_a_missed_memory(memory: HindsightMemory) -> None:
    """Asking the same question again is no evidence that memory failed."""
    memory.remember("What am I allergic to at dinner?", namespace="u1", kind="query")
    run = [HumanMessage("What am I allergic to at dinner?"), AIMessage("No idea.")]
    result = reflect(memory, run, namespace="u1", recalled_ids=[])
    assert (result.missed, result.lesson) == ([], "")


def test_a_memory_merged_with_this_runs_words_is_not_missed(
    memory: HindsightMemory,
) -> None:
    """Restating a fact that capture merged into an old memory is no lesson."""
    memory.remember(
        "The user is allergic to peanuts and shellfish",
        namespace="u1",
        source_ids=["earlier", "h9"],
    )
    said = HumanMessage("I'm allergic to peanuts and shellfish.", id="h9")
    result = reflect(memory, [said, AIMessage("Noted.")], namespace="u1")
    assert (result.missed, result.lesson) == ([], "")


def test_a_correction_counts_only_after_an_answer(memory: HindsightMemory) -> None:
    """'Actually ...' before any answer corrects nothing: no memory is weakened."""
    fact = _fact(memory, "The user lives in Porto, Portugal")
    run = [
        HumanMessage("Where do I live?"),
        HumanMessage("Actually, also tell me about Porto, Portugal."),
        AIMessage("You live in Porto, Portugal."),
    ]
    result = reflect(memory, run, namespace="u1", recalled_ids=[fact])
    assert (result.used, result.misleading, result.lesson) == ([fact], [], "")


def _saved_by_the_tool_last_turn(
    memory: HindsightMemory, now: str
) -> tuple[str, list[object]]:
    """A memory manage_memory wrote from the previous message, and the run after it.

    The tool's memory carries no source ids here (as the tool wrote it before
    it attributed its memories), so only the run's messages can tell.
    """
    told = "I prefer window seats on flights"
    saved = memory.remember(
        told, namespace="u1", kind="preference", meta={"origin": "memory_tool"}
    )
    call = tool_call("manage_memory", {"action": "create", "content": told}, "c1")
    run = [
        HumanMessage(told, id="h1"),
        call,
        ToolMessage(f"created memory {saved.id}", tool_call_id="c1", id="t1"),
        AIMessage("Saved.", id="a1"),
        HumanMessage(now, id="h2"),
        AIMessage("Noted.", id="a2"),
    ]
    return saved.id, run


def test_the_previous_turns_message_is_no_restatement(memory: HindsightMemory) -> None:
    """What the tool saved from the previous message was not repeated: no lesson."""
    _, run = _saved_by_the_tool_last_turn(memory, "I'm vegetarian and I love tofu.")
    query = "I'm vegetarian and I love tofu."
    result = reflect(memory, run, namespace="u1", recalled_ids=[], query=query)
    assert (result.missed, result.lesson, result.experience_id) == ([], "", None)


def test_restating_a_tool_saved_memory_this_turn_is_a_missed_lesson(
    memory: HindsightMemory,
) -> None:
    """The same memory repeated in this run's own message, not recalled, is a miss."""
    saved, run = _saved_by_the_tool_last_turn(
        memory, "Book my flight to Oslo. I prefer window seats on flights!"
    )
    result = reflect(memory, run, namespace="u1", recalled_ids=[])
    assert result.missed == [saved]
    assert "the user had to repeat it" in result.lesson
