"""Bad input: empty, huge, binary, mixed-script, unknown tenants, model changes, bad LLMs."""

from __future__ import annotations

from typing import Any

import pytest
import structlog
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableLambda

from hindsight_lg import EmbeddingMismatch, HindsightMemory, Kind
from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

TRIP = "帮我查一下上海明天的天气，另外我下周三要去上海出差，记得提醒我带伞"


@pytest.mark.parametrize("text", ["", "   ", "\n\t  \r\n"])
def test_empty_turns_write_nothing(
    memory: HindsightMemory, namespace: str, text: str
) -> None:
    """An empty or blank turn gives no memories."""
    assert [] == memory.capture(text, namespace=namespace)
    assert [] == memory.list_memories(namespace, history=True)


def test_empty_message_list_writes_nothing(
    memory: HindsightMemory, namespace: str
) -> None:
    """An empty list of messages is a no-op."""
    assert [] == memory.capture([], namespace=namespace)


def test_huge_turn_is_truncated_with_a_note(
    memory: HindsightMemory, namespace: str
) -> None:
    """A turn past the policy's size limit is cut, and the record says so."""
    limit = memory.policy.max_content_chars
    huge = "I need to remember the deployment checklist " + "step " * (limit // 2)
    [r] = memory.capture(huge, namespace=namespace)
    assert len(r.content) <= limit + 2
    assert r.content.endswith("…")
    assert r.meta["truncated"] is True
    [stored] = memory.list_memories(namespace)
    assert stored.meta["truncated"] is True


@pytest.mark.parametrize(
    "payload",
    [
        b"I like tea",
        "binary\x00\x01\x02 data",
        [HumanMessage(content="fine"), {"role": "user", "content": b"\x89PNG"}],
    ],
    ids=["bytes", "nul-in-text", "bytes-in-message"],
)
def test_binary_input_is_a_clear_value_error(
    memory: HindsightMemory, namespace: str, payload: Any
) -> None:
    """Bytes and NUL-bearing text are refused with a ValueError before any write."""
    with pytest.raises(ValueError, match="bytes|binary|NUL"):
        memory.capture(payload, namespace=namespace)
    assert [] == memory.list_memories(namespace, history=True)


def test_mixed_script_text_is_kept_whole_and_recallable(
    memory: HindsightMemory, namespace: str
) -> None:
    """A turn mixing Chinese, English and emoji is stored as said and found again."""
    text = "我下周要和Alice去Berlin开会 then dinner at Café Zoë 🍕"
    written = memory.capture(text, namespace=namespace)
    assert [text] == [r.content for r in written]
    assert {"Alice", "Berlin"} <= set(written[0].entities)
    result = memory.recall("Berlin 开会", namespace=namespace, timeout=None)
    assert written[0].id == result.ids[0]


def test_unknown_namespace_reads_empty(memory: HindsightMemory) -> None:
    """Reading a namespace nobody wrote to is empty, not an error."""
    ns = "nobody-here"
    result = memory.recall("anything at all?", namespace=ns, timeout=None)
    assert ([], "") == (result.memories, result.to_prompt())
    assert [] == memory.list_memories(ns, history=True)
    assert 0 == memory.stats(ns)["total"]


@pytest.mark.parametrize("bad", ["", None, 42])
def test_missing_namespace_is_a_caller_error(memory: HindsightMemory, bad: Any) -> None:
    """Every operation needs a namespace: none, empty or non-string ones are refused."""
    with pytest.raises((ValueError, TypeError)):
        memory.capture("I like tea", namespace=bad)
    with pytest.raises((ValueError, TypeError)):
        memory.recall("tea", namespace=bad)


def test_non_positive_budget_is_a_caller_error(
    memory: HindsightMemory, namespace: str
) -> None:
    """A recall budget must be positive."""
    with pytest.raises(ValueError, match="budget"):
        memory.recall("tea", namespace=namespace, budget_tokens=0)


def test_another_embedding_model_is_a_clear_mismatch(
    backend: MemoryBackend, hashing: HashingEmbedder, namespace: str
) -> None:
    """Opening stored vectors with a model of another dimension names `reembed`.

    A hand-built engine opens at its first call, so that call raises (and
    every later one: a failed opening keeps nothing).
    """
    with HindsightMemory(backend, hashing) as memory:
        memory.capture("I prefer green tea over coffee", namespace=namespace)
    other = HindsightMemory(backend, HashingEmbedder(dim=64))
    for _ in range(2):
        with pytest.raises(EmbeddingMismatch, match="hindsight-lg reembed"):
            other.recall("tea", namespace=namespace)


class StructuredFake(FakeListChatModel):
    """A fake chat model whose structured output is a scripted function."""

    structured: Any = None

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        if self.structured is None:
            raise NotImplementedError("no structured output")
        return RunnableLambda(self.structured)


def engine_with(llm: Any) -> HindsightMemory:
    return HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), llm=llm, clock=FrozenClock()
    )


@pytest.mark.parametrize(
    "reply",
    [
        "this is not JSON",
        '{"events": [{"content": "", "kind": "task"}]}',
        '{"events": [{"content": "x", "kind": "banana"}]}',
        '{"events": []}',
        '{"events": [{"content": "x", "salience": 7}]}',
    ],
    ids=[
        "prose",
        "empty-content",
        "unknown-kind",
        "no-events",
        "salience-out-of-range",
    ],
)
def test_malformed_llm_output_falls_back_to_heuristics(reply: str) -> None:
    """Unusable model output is logged and the heuristics capture the turn anyway."""
    with engine_with(FakeListChatModel(responses=[reply])) as memory:
        with structlog.testing.capture_logs() as logs:
            written = memory.capture(TRIP, namespace="u1")
    assert [Kind.QUERY, Kind.TASK] == [r.kind for r in written]
    assert "llm_extraction_failed" in [e["event"] for e in logs]


def test_a_model_that_raises_falls_back_to_heuristics() -> None:
    """A structured-output call that raises loses nothing of the turn."""

    def boom(_: Any) -> Any:
        raise RuntimeError("model server down")

    with engine_with(StructuredFake(responses=["x"], structured=boom)) as memory:
        written = memory.capture(TRIP, namespace="u1")
    assert [Kind.QUERY, Kind.TASK] == [r.kind for r in written]


def test_valid_structured_output_is_used() -> None:
    """Validated model output decides the events instead of the heuristics."""
    reply = {
        "events": [
            {
                "content": "User prefers window seats",
                "kind": "preference",
                "salience": 0.9,
            },
            {
                "content": "Flight to Lisbon in June",
                "kind": "task",
                "entities": ["Lisbon"],
            },
        ],
        "causes": [[0, 1], [5, 0]],
    }
    llm = StructuredFake(responses=["x"], structured=lambda _: reply)
    with engine_with(llm) as memory:
        written = memory.capture("long rambling turn about flights", namespace="u1")
    assert ["User prefers window seats", "Flight to Lisbon in June"] == [
        r.content for r in written
    ]
    assert [Kind.PREFERENCE, Kind.TASK] == [r.kind for r in written]
    assert ["Lisbon"] == written[1].entities


@pytest.mark.parametrize(
    "text",
    [
        "what did I do 99999999 days ago?",
        "december 9999",
        "9999年12月的事",
        "january 0000",
        "0000年1月",
    ],
)
def test_time_phrases_past_the_calendar_never_crash(text: str) -> None:
    """Recall and capture ignore a time phrase outside years 1-9999 as a window."""
    with HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=FrozenClock()
    ) as memory:
        memory.capture("I went hiking in the Harz", namespace="u1")
        written = memory.capture(f"I remember {text}", namespace="u1")
        result = memory.recall(text, namespace="u1", timeout=None)
    assert written and all(r.mentioned_time is None for r in written)
    assert result.timed_out is False


@pytest.mark.parametrize("when", [float("inf"), float("-inf"), float("nan"), 1e20])
def test_out_of_range_event_time_is_a_value_error_at_the_api(when: float) -> None:
    """capture and submit refuse an event_time no calendar holds, before any write."""
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        with pytest.raises(ValueError, match="event_time"):
            memory.capture("I like tea", namespace="u1", event_time=when)
        with pytest.raises(ValueError, match="event_time"):
            memory.submit("I like tea", namespace="u1", event_time=when)
        memory.flush()
        assert [] == memory.list_memories("u1", history=True)


def test_event_time_of_the_wrong_type_is_a_type_error() -> None:
    """A string event_time is a TypeError that names datetime.timestamp()."""
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        with pytest.raises(TypeError, match="timestamp"):
            memory.capture("I like tea", namespace="u1", event_time="2024-01-01")  # type: ignore[arg-type]
