"""Hypothesis fuzz of untrusted input: model output for extraction and reflection, argv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig, RunnableLambda

from hindsight_lg import HindsightMemory
from hindsight_lg._messages import text_of
from hindsight_lg.cli import COMMANDS, main
from hindsight_lg.memory.jobs.reflect import ReflectionAnswer, _llm_answer
from hindsight_lg.memory.language.extract import (
    ExtractedTurn,
    llm_extractor,
    parse_extraction,
)
from hindsight_lg.model import MemoryRecord
from hindsight_lg.nodes import capture_node, recall_node
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

TURN = "I prefer green tea, and remind me to call Anna on Friday"

# JSON-ish values of every shape a model might return, huge and empty included.
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=50)
    | st.just("x" * 100_000),
    lambda inner: (
        st.lists(inner, max_size=5)
        | st.dictionaries(
            st.sampled_from(["events", "causes", "content", "kind", "salience", "x"])
            | st.text(max_size=5),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)
model_outputs = (
    json_values
    | json_values.map(json.dumps)
    | json_values.map(lambda v: json.dumps(v)[: max(0, len(json.dumps(v)) // 2)])
    | st.binary(max_size=64)
    | st.text(max_size=200)
)


class Structured:
    """A chat model whose structured output is whatever the test says."""

    def __init__(self, reply: Any) -> None:
        self.reply = reply

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Any:
        return RunnableLambda(lambda _: self.reply)

    def invoke(self, _: Any) -> Any:
        return self.reply


@given(model_outputs)
def test_parse_extraction_validates_or_says_value_error(raw: Any) -> None:
    """Any model output parses to an ExtractedTurn or is a ValueError, nothing else."""
    try:
        assert isinstance(parse_extraction(raw), ExtractedTurn)
    except ValueError as exc:
        assert "extraction output" in str(exc)


@given(model_outputs)
def test_llm_extractor_never_raises_and_keeps_the_turn(raw: Any) -> None:
    """Whatever the model returns, extraction yields events covering the turn."""
    extraction = llm_extractor(Structured(raw))(TURN, "user", 1_700_000_000.0)
    assert extraction.events
    assert all(e.content.strip() for e in extraction.events)


@settings(max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(model_outputs)
def test_capture_with_any_model_output_loses_nothing(raw: Any) -> None:
    """Capture never raises on model output and always stores the turn's events."""
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), llm=Structured(raw), clock=FrozenClock()
    )
    with memory:
        written = memory.capture(TURN, namespace="u1")
        stored = memory.list_memories("u1")
    assert written and {r.id for r in written} <= {r.id for r in stored}


@given(model_outputs)
def test_reflection_answer_is_validated_or_dropped(raw: Any) -> None:
    """Reflection keeps a model answer only when valid and naming shown ids."""
    shown = {"m1": MemoryRecord(namespace="u1", content="tea")}
    answer = _llm_answer(Structured(raw), [], shown)
    assert answer is None or (
        isinstance(answer, ReflectionAnswer)
        and set(answer.used) | set(answer.misleading) | set(answer.missed) <= {"m1"}
        and answer.lesson.strip()
    )


argv_tokens = st.lists(
    st.sampled_from(["--help-me", "-n", "--uri", "--to", "-x", "--", "5", ""])
    | st.text(max_size=12),
    max_size=5,
)


# panel serves until interrupted: an invocation it accepts would never return.
FUZZ_COMMANDS = [c for c in COMMANDS if c != "panel"]


@settings(max_examples=60)
@given(st.sampled_from(["", *FUZZ_COMMANDS, "reembed", "import"]), argv_tokens)
def test_random_argv_exits_cleanly(command: str, rest: list[str]) -> None:
    """Random arguments end in argparse's exit 2 or a clear error, never a traceback."""
    argv = [command, *rest] if command else rest
    try:
        code = main(argv)
    except SystemExit as exc:
        assert exc.code in (0, 2) or isinstance(exc.code, str)
    else:
        assert isinstance(code, int)


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands that parse run in an empty directory, on no real store."""
    monkeypatch.chdir(tmp_path)


# -- every message shape LangChain can produce --------------------------------


def nested(depth: int, leaf: Any) -> Any:
    """``leaf`` inside ``depth`` lists (built without recursion)."""
    for _ in range(depth):
        leaf = [leaf]
    return leaf


texts = st.text(max_size=30).filter(lambda t: "\x00" not in t)
maybe = st.none() | texts | st.integers() | st.floats(allow_nan=True) | st.booleans()
blocks = st.one_of(
    texts,
    st.fixed_dictionaries({"type": st.just("text"), "text": maybe}),
    st.fixed_dictionaries(
        {"type": st.just("image_url"), "image_url": st.none() | st.just({"url": None})}
    ),
    st.fixed_dictionaries(
        {
            "type": st.just("image"),
            "source_type": st.just("base64"),
            "data": st.just("iVBORw0KGgo="),
            "mime_type": st.none() | st.just("image/png"),
        }
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": maybe, "name": maybe, "input": st.none()}
    ),
    st.dictionaries(st.sampled_from(["type", "text", "x", "content"]), maybe),
    st.none(),
)
contents = st.one_of(
    texts,
    st.lists(blocks, max_size=6),
    st.tuples(st.integers(1, 6000), blocks).map(lambda d: nested(*d)),
    st.lists(st.lists(blocks, max_size=3), max_size=3),
    st.none(),
    maybe,
)
tool_calls = st.lists(
    st.fixed_dictionaries(
        {"name": texts, "args": st.dictionaries(texts, maybe, max_size=2), "id": texts}
    ),
    max_size=2,
)


def as_message(kind: str, content: Any, calls: list[Any], name: Any) -> Any:
    """A message of ``kind`` with any content, LangChain's validation bypassed."""
    if kind == "dict":
        return {"role": name, "content": content}
    cls: Any = {"human": HumanMessage, "ai": AIMessage, "tool": ToolMessage}[kind]
    extra: dict[str, Any] = {"tool_calls": calls} if kind == "ai" else {}
    if kind == "tool":
        extra["tool_call_id"] = "call-1"
    return cls.model_construct(content=content, name=name, id=None, **extra)


messages = st.builds(
    as_message,
    st.sampled_from(["human", "ai", "tool", "dict"]),
    contents,
    tool_calls,
    st.none() | st.sampled_from(["user", "assistant", "maya", "", "tool"]),
)
threads = st.lists(messages, min_size=1, max_size=4)


def documented(exc: BaseException) -> bool:
    """The errors capture documents for bad content: bytes or binary text."""
    return isinstance(exc, ValueError) and any(
        word in str(exc) for word in ("bytes", "binary", "NUL")
    )


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(threads)
def test_capture_and_recall_take_any_message_shape(thread: list[Any]) -> None:
    """capture, submit and recall never raise on content LangChain can carry."""
    with HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=FrozenClock()
    ) as memory:
        for call in (memory.capture, memory.submit):
            try:
                call(thread, namespace="u1")
            except Exception as exc:
                assert documented(exc), repr(exc)
        memory.flush()
        for message in thread:
            memory.recall(text_of(message) or "x", namespace="u1", timeout=None)


@settings(max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(threads)
def test_the_nodes_take_any_message_shape(thread: list[Any]) -> None:
    """recall_node and capture_node run on any thread of messages without raising."""
    config: RunnableConfig = {"configurable": {"user_id": "u1", "thread_id": "t1"}}
    with HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=FrozenClock()
    ) as memory:
        state = {"messages": [HumanMessage("I like tea"), *thread]}
        recalled = recall_node(memory, timeout=None).invoke(state, config)
        assert isinstance(recalled, dict)
        try:
            capture_node(memory).invoke(state, config)
        except Exception as exc:
            assert documented(exc), repr(exc)
        memory.flush()


def test_a_text_block_with_none_text_is_skipped() -> None:
    """HumanMessage(content=[{"type": "text", "text": None}]) reads as no text."""
    message = HumanMessage(content=[{"type": "text", "text": None}, "tea"])
    assert "tea" == text_of(message)


def test_content_nested_5000_deep_is_read_without_recursion() -> None:
    """Content nested 5,000 lists deep is walked iteratively and its text kept."""
    said = "I prefer green tea over coffee"
    message = {"role": "user", "content": nested(5000, said)}
    assert said == text_of(message)
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        assert memory.capture([message], namespace="u1")
