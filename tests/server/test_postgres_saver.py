"""The bridge over PostgreSQL: LangGraph's conformance suite run the standard way.

``validate(factory)`` without arguments detects capabilities on the bridge by
type, as LangGraph's server does; the bridge must advertise what the Postgres
saver implements (``prune``) and nothing it lacks (``delete_for_runs``,
``copy_thread``), and every detected capability must pass.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import (
    BASE_CAPABILITIES,
)
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.graph import START, MessagesState, StateGraph

from hindsight_lg import HindsightMemory
from hindsight_lg.checkpointers import HindsightSaver
from hindsight_lg.checkpointers.aio import AsyncHindsightSaver
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
from tests.server.postgres import postgres_server

BASE = {c.value for c in BASE_CAPABILITIES}


@pytest.fixture(scope="module")
def postgres_uri() -> Iterator[str]:
    with postgres_server() as uri:
        yield uri


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def _failures(report: Any) -> dict[str, Any]:
    """Failures of the capabilities the suite ran, which must be the Postgres saver's."""
    results = {k: r for k, r in report.results.items() if r.detected}
    assert set(results) == BASE | {"prune"}
    return {k: r.failures for k, r in results.items() if not r.passed}


async def test_conformance_over_postgres_saver(
    postgres_uri: str, memory: HindsightMemory
) -> None:
    """validate(HindsightSaver(PostgresSaver)) passes with no arguments."""

    @checkpointer_test(name="HindsightSaver(PostgresSaver)")
    async def factory() -> AsyncIterator[HindsightSaver]:
        with PostgresSaver.from_conn_string(postgres_uri) as inner:
            inner.setup()
            yield HindsightSaver(inner, memory)

    report = await validate(factory)
    assert _failures(report) == {}


async def test_conformance_over_async_postgres_saver(
    postgres_uri: str, memory: HindsightMemory
) -> None:
    """validate(AsyncHindsightSaver(AsyncPostgresSaver)) passes with no arguments."""

    @checkpointer_test(name="AsyncHindsightSaver(AsyncPostgresSaver)")
    async def factory() -> AsyncIterator[AsyncHindsightSaver]:
        async with AsyncPostgresSaver.from_conn_string(postgres_uri) as inner:
            await inner.setup()
            yield AsyncHindsightSaver(inner, memory)

    report = await validate(factory)
    assert _failures(report) == {}


def test_a_turn_over_postgres_is_captured_and_recalled(
    postgres_uri: str, memory: HindsightMemory
) -> None:
    """A graph checkpointed in Postgres through the bridge captures its turn."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [AIMessage("noted")]})
    builder.add_edge(START, "agent")
    with PostgresSaver.from_conn_string(postgres_uri) as inner:
        inner.setup()
        graph = builder.compile(checkpointer=HindsightSaver(inner, memory))
        config = {"configurable": {"thread_id": "pg-1", "user_id": "u1"}}
        fact = "My sister Lena's wedding is in Lisbon on June 14."
        graph.invoke({"messages": [HumanMessage(fact)]}, config)
        assert graph.get_state(config).values["messages"][-1].content == "noted"
    memory.flush()
    recalled = memory.recall("When is Lena's wedding?", namespace="u1")
    assert any("June 14" in r.record.content for r in recalled.memories)
