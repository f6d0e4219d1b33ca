"""With an LLM, the model judges changes of mind; the heuristics catch its failures."""

from __future__ import annotations

import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from hindsight_lg import HindsightMemory, Status
from hindsight_lg.memory.capture.llm_judge import llm_judge, parse_judgements
from hindsight_lg.memory.language.judge import Decision
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import (
    FakeToolChatModel,
    FrozenClock,
    HashingEmbedder,
    InMemoryBackend,
    tool_call,
)


class ScriptedModel(FakeToolChatModel):
    """Extracts each turn as itself and answers every judgment with ``verdict``."""

    verdict: str = "replace"

    def __init__(self, **data: Any) -> None:
        super().__init__(respond=self._reply, **data)

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        prompt = str(messages[-1].content)
        if "EARLIER:" in prompt:
            count = prompt.count("\n[")
            decisions = [{"index": i, "decision": self.verdict} for i in range(count)]
            return tool_call("Judgements", {"decisions": decisions})
        turn = prompt.split("Turn:\n", 1)[1]
        event = {"content": turn, "kind": "preference", "salience": 0.8}
        return tool_call("ExtractedTurn", {"events": [event]})


def _engine(llm: Any, clock: FrozenClock) -> HindsightMemory:
    return HindsightMemory(InMemoryBackend(), HashingEmbedder(), llm=llm, clock=clock)


def _statuses(memory: HindsightMemory, old: str, new: str) -> tuple[str, str]:
    clock: FrozenClock = memory.clock  # type: ignore[assignment]
    [first] = memory.capture(old, namespace="u")
    clock.advance(days=10)
    [second] = memory.capture(new, namespace="u")
    history = {r.id: r.status for r in memory.list_memories("u", history=True)}
    return history[first.id], history[second.id]


def test_the_model_decides_a_change_the_heuristics_cannot_read() -> None:
    """ "I'm team tea now" has no slot the rules know; the model says replace."""
    memory = _engine(ScriptedModel(), FrozenClock())
    statuses = _statuses(memory, "I drink coffee every day", "I'm team tea now")
    assert (Status.SUPERSEDED, Status.ACTIVE) == statuses


def test_the_models_ignore_overrules_the_heuristics() -> None:
    """Where the model judges "ignore", a move the rules would replace stays apart."""
    memory = _engine(ScriptedModel(verdict="ignore"), FrozenClock())
    statuses = _statuses(memory, "I live in Boston", "I moved to Denver last spring")
    assert (Status.ACTIVE, Status.ACTIVE) == statuses


def test_a_model_returning_garbage_falls_back_to_the_heuristics() -> None:
    """Unparseable output for extraction and judgment: the rules still supersede."""
    garbage = FakeToolChatModel(responses=[AIMessage("lol, not JSON {")])
    memory = _engine(garbage, FrozenClock())
    statuses = _statuses(
        memory,
        "I take the 7:40 train",
        "These days I cycle to the office instead of taking the train",
    )
    assert (Status.SUPERSEDED, Status.ACTIVE) == statuses


def _record(text: str) -> MemoryRecord:
    return MemoryRecord(namespace="u", content=text)


def test_a_model_slower_than_the_timeout_falls_back() -> None:
    """A hung model costs the timeout once; the heuristics answer."""

    class Slow(ScriptedModel):
        def _reply(self, messages: list[BaseMessage]) -> AIMessage:
            time.sleep(1.0)
            return super()._reply(messages)

    judge = llm_judge(Slow(verdict="ignore"), timeout_s=0.1)
    started = time.perf_counter()
    decisions = judge(_record("我上个月搬到深圳了"), [_record("我住在杭州")])
    assert [Decision.REPLACE] == decisions
    assert time.perf_counter() - started < 0.9


def test_a_refusal_falls_back_to_the_heuristics() -> None:
    """A model that answers with prose (no tool call) is a refusal: the rules decide."""
    refusing = FakeToolChatModel(responses=[AIMessage("I can't help with that.")])
    decisions = llm_judge(refusing)(
        _record("I also like swimming"), [_record("I like hiking")]
    )
    assert [Decision.ADD] == decisions


def test_judgements_naming_a_candidate_not_asked_are_refused() -> None:
    """An index past the candidates is unusable output, not a silent ignore."""
    reply = {"decisions": [{"index": 3, "decision": "replace"}]}
    with pytest.raises(ValueError, match="not asked"):
        parse_judgements(reply, 1)
