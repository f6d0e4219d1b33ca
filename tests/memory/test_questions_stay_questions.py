"""A user's question is a short-lived query: never a preference, never the answer."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.language import classify
from hindsight_lg.model import Kind
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("What seat do I like?", Kind.QUERY),
        ("Where do I live?", Kind.QUERY),
        ("Do I have a meeting tomorrow?", Kind.QUERY),
        ("我喜欢什么座位？", Kind.QUERY),
        ("I love sushi, do you?", Kind.PREFERENCE),
        ("我最爱吃火锅，你呢？", Kind.PREFERENCE),
        ("Can you remind me to call mom tomorrow?", Kind.TASK),
        ("你能提醒我带伞吗？", Kind.TASK),
    ],
)
def test_a_question_and_nothing_else_is_a_query(text: str, kind: Kind) -> None:
    """Words shared with a preference do not make a question one; a statement with a
    question tag, or a request to the assistant, keeps its own kind."""
    assert kind == classify(text)


@pytest.fixture
def memory() -> HindsightMemory:
    m = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=FrozenClock())
    for text in ("I prefer window seats on flights.", "I live in Tokyo."):
        m.capture(text, namespace="bob")
        m.clock.advance(days=1)  # type: ignore[attr-defined]
    for text in ("What seat do I prefer on flights?", "Where do I live?"):
        m.capture(text, namespace="bob")
    return m


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("What seat do I prefer on flights?", "I prefer window seats on flights."),
        ("Where do I live?", "I live in Tokyo."),
    ],
)
def test_a_question_asked_before_never_outranks_the_statement_that_answers(
    memory: HindsightMemory, question: str, answer: str
) -> None:
    """The same question asked again finds the answer first, the old question after."""
    result = memory.recall(question, namespace="bob", timeout=None)
    kinds = [m.record.kind for m in result.memories]
    assert answer == result.memories[0].record.content
    assert kinds.index(Kind.QUERY) > 0


def test_the_store_search_puts_earlier_questions_last(memory: HindsightMemory) -> None:
    """``store.search`` ranks statements before questions asked before."""
    store = HindsightStore(memory)
    items = store.search(("memories", "bob"), query="Where do I live?", limit=4)
    kinds = [i.value["kind"] for i in items]
    assert "I live in Tokyo." == items[0].value["content"]
    assert ["query", "query"] == kinds[-2:] and "query" not in kinds[:-2]
