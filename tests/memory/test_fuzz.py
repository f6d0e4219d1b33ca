"""Hypothesis fuzz of untrusted input: model output for extraction and reflection, argv."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.runnables import RunnableLambda

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import COMMANDS, main
from hindsight_lg.memory.capture.extract import (
    ExtractedTurn,
    llm_extractor,
    parse_extraction,
)
from hindsight_lg.memory.lifecycle.reflect import ReflectionAnswer, _llm_answer
from hindsight_lg.model import MemoryRecord
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


@settings(max_examples=60)
@given(st.sampled_from(["", *COMMANDS, "reembed", "import"]), argv_tokens)
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
