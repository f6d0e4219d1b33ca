"""The bridging checkpointer: LangGraph conformance, capture at put, no double capture."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import (
    BASE_CAPABILITIES,
    DetectedCapabilities,
)
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import START, MessagesState, StateGraph

from hindsight_lg import HindsightMemory
from hindsight_lg.checkpointers import HindsightSaver
from hindsight_lg.checkpointers._base import implements
from hindsight_lg.checkpointers.aio import AsyncHindsightSaver
from hindsight_lg.nodes import capture_node
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

BASE = {c.value for c in BASE_CAPABILITIES}
FACT = "I am allergic to peanuts and I love jasmine tea."


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def _cfg(thread: str, user: str = "u1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def _graph(saver: BaseCheckpointSaver[Any], *nodes: tuple[str, Any]) -> Any:
    """agent (answers "noted") followed by optional extra nodes, compiled with saver."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [AIMessage("noted")]})
    builder.add_edge(START, "agent")
    last = "agent"
    for name, node in nodes:
        builder.add_node(name, node)
        builder.add_edge(last, name)
        last = name
    return builder.compile(checkpointer=saver)


def _spy(memory: HindsightMemory) -> list[str]:
    ids: list[str] = []
    real = memory.worker._capture

    def spy(**item: Any) -> Any:
        ids.extend(m["id"] for m in item["messages_or_text"])
        return real(**item)

    memory.worker._capture = spy
    return ids


async def _report(factory: Any, inner: BaseCheckpointSaver[Any]) -> dict[str, Any]:
    """Run the suite the standard way (no arguments); print which capabilities ran.

    What the suite detects on the bridge must be what it detects on the bare
    inner saver: the base five plus the optional ones the inner implements.
    """
    report = await validate(factory)
    results = {
        k: (r.passed, r.failures) for k, r in report.results.items() if r.detected
    }
    expected = BASE | {
        c.value for c in DetectedCapabilities.from_instance(inner).detected
    }
    print(f"{factory.name}: validated {sorted(results)}")
    assert set(results) == expected
    return results


async def test_conformance_with_in_memory_inner(memory: HindsightMemory) -> None:
    """LangGraph's conformance suite passes with an InMemorySaver inside."""

    @checkpointer_test(name="HindsightSaver(InMemorySaver)")
    async def factory() -> AsyncIterator[HindsightSaver]:
        yield HindsightSaver(InMemorySaver(), memory)

    results = await _report(factory, InMemorySaver())
    assert all(passed for passed, _ in results.values()), results


async def test_conformance_with_sqlite_inner(memory: HindsightMemory) -> None:
    """The suite passes with a SqliteSaver inside (async twins run it in a thread)."""

    @checkpointer_test(name="HindsightSaver(SqliteSaver)")
    async def factory() -> AsyncIterator[HindsightSaver]:
        conn = sqlite3.connect(":memory:", check_same_thread=False)
        inner = SqliteSaver(conn)
        inner.setup()
        yield HindsightSaver(inner, memory)
        conn.close()

    conn = sqlite3.connect(":memory:", check_same_thread=False)
    results = await _report(factory, SqliteSaver(conn))
    conn.close()
    assert all(passed for passed, _ in results.values()), results


async def test_conformance_async_saver_with_async_sqlite(
    memory: HindsightMemory,
) -> None:
    """AsyncHindsightSaver passes the suite around an AsyncSqliteSaver."""

    @checkpointer_test(name="AsyncHindsightSaver(AsyncSqliteSaver)")
    async def factory() -> AsyncIterator[AsyncHindsightSaver]:
        async with AsyncSqliteSaver.from_conn_string(":memory:") as inner:
            yield AsyncHindsightSaver(inner, memory)

    async with AsyncSqliteSaver.from_conn_string(":memory:") as probe:
        results = await _report(factory, probe)
    assert all(passed for passed, _ in results.values()), results


OPTIONAL_METHODS = [
    name
    for base in ("delete_for_runs", "copy_thread", "prune")
    for name in (base, f"a{base}")
]


@pytest.mark.parametrize("method", OPTIONAL_METHODS)
def test_the_bridge_overrides_only_what_the_inner_saver_overrides(
    memory: HindsightMemory, method: str
) -> None:
    """LangGraph detects optional methods by type: the bridge's answer is the inner's.

    The sync bridge runs a sync saver's method in a thread for the async twin.
    """
    for inner in (InMemorySaver(), _Copying()):
        bridge = HindsightSaver(inner, memory)
        needs = method.removeprefix("a")
        assert implements(bridge, method) == implements(inner, needs), (inner, method)
        assert isinstance(bridge, HindsightSaver)
        assert type(bridge).__name__ == "HindsightSaver"


async def test_async_bridge_overrides_only_what_the_inner_saver_overrides(
    memory: HindsightMemory,
) -> None:
    """The async bridge over AsyncSqliteSaver leaves copy_thread to LangGraph's fallback."""
    async with AsyncSqliteSaver.from_conn_string(":memory:") as inner:
        saver = AsyncHindsightSaver(inner, memory)
        for method in OPTIONAL_METHODS:
            assert implements(saver, method) == implements(inner, method), method
        with pytest.raises(NotImplementedError):
            await saver.acopy_thread("a", "b")


class _Copying(InMemorySaver):
    calls: list[tuple[str, str]] = []

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.calls.append((source_thread_id, target_thread_id))


def test_optional_methods_forward_when_the_inner_has_them(
    memory: HindsightMemory,
) -> None:
    """When the inner saver implements copy_thread, the bridge and its async twin call it."""
    _Copying.calls.clear()
    saver = HindsightSaver(_Copying(), memory)
    saver.copy_thread("a", "b")
    asyncio.run(saver.acopy_thread("c", "d"))
    assert _Copying.calls == [("a", "b"), ("c", "d")]


def test_put_captures_turns_without_a_capture_node(memory: HindsightMemory) -> None:
    """A graph with no memory nodes still feeds long-term memory through the saver."""
    graph = _graph(HindsightSaver(InMemorySaver(), memory))
    graph.invoke({"messages": [HumanMessage(FACT)]}, _cfg("t1"))
    memory.flush()
    assert any("jasmine" in r.content for r in memory.list_memories("u1"))
    assert memory.list_memories("u2") == []


def test_saver_and_capture_node_capture_each_message_once(
    memory: HindsightMemory,
) -> None:
    """With both the saver and a capture node, every message id is captured once."""
    ids = _spy(memory)
    saver = HindsightSaver(InMemorySaver(), memory)
    graph = _graph(saver, ("capture", capture_node(memory)))
    out = graph.invoke({"messages": [HumanMessage(FACT)]}, _cfg("t1"))
    graph.invoke({"messages": [HumanMessage("and I live in Porto")]}, _cfg("t1"))
    memory.flush()
    assert len(ids) == len(set(ids)) == 4
    assert out["messages"][0].id in ids


def test_replay_and_fork_never_capture_twice(memory: HindsightMemory) -> None:
    """Re-running from an old checkpoint and forking with update_state add no captures."""
    ids = _spy(memory)
    graph = _graph(HindsightSaver(InMemorySaver(), memory))
    graph.invoke({"messages": [HumanMessage(FACT)]}, _cfg("t1"))
    history = list(graph.get_state_history(_cfg("t1")))
    before_agent = next(s for s in history if s.next == ("agent",))
    graph.invoke(None, before_agent.config)  # replay
    fork = graph.update_state(before_agent.config, {"messages": []})
    graph.invoke(None, fork)
    memory.flush()
    human = [i for i in ids if i == history[0].values["messages"][0].id]
    assert human == [history[0].values["messages"][0].id]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("first_id", [None, "m" * 600, "m\x001"])
def test_restart_captures_only_new_messages(
    memory: HindsightMemory, first_id: str | None
) -> None:
    """A new process (fresh claims) over the same thread captures only the new
    turn, whatever the earlier message's id (one capture cuts or cleans too)."""
    inner = InMemorySaver()
    backend = memory.backend
    _graph(HindsightSaver(inner, memory)).invoke(
        {"messages": [HumanMessage(FACT, id=first_id)]}, _cfg("t1")
    )
    memory.flush()
    restarted = HindsightMemory(backend, HashingEmbedder())
    ids = _spy(restarted)
    out = _graph(HindsightSaver(inner, restarted)).invoke(
        {"messages": [HumanMessage("I moved to Porto")]}, _cfg("t1")
    )
    restarted.close()
    assert sorted(ids) == sorted(m.id for m in out["messages"][2:])


def test_subgraph_checkpoints_are_not_captured(memory: HindsightMemory) -> None:
    """Puts with a non-empty checkpoint_ns (subgraphs) are ignored."""
    saver = HindsightSaver(InMemorySaver(), memory)
    config = {"configurable": {**_cfg("t1")["configurable"], "checkpoint_ns": "sub:1"}}
    assert saver._who(config, {"messages": 2}) is None
    assert saver._who(_cfg("t1"), {"messages": 2}) is not None
    assert saver._who(_cfg("t1"), {"other": 2}) is None


def test_delete_thread_can_forget_its_memories(memory: HindsightMemory) -> None:
    """delete_thread with forget_on_delete removes that thread's memories only."""
    saver = HindsightSaver(InMemorySaver(), memory, forget_on_delete=True)
    graph = _graph(saver)
    graph.invoke({"messages": [HumanMessage(FACT)]}, _cfg("t1"))
    graph.invoke({"messages": [HumanMessage("I live in Porto")]}, _cfg("t2"))
    memory.flush()
    saver.delete_thread("t1")
    assert saver.get_tuple(_cfg("t1")) is None
    assert memory.list_memories("u1", thread_id="t1") == []
    assert memory.list_memories("u1", thread_id="t2")


def test_with_allowlist_and_attributes_forward_to_inner(
    memory: HindsightMemory,
) -> None:
    """with_allowlist clones around the inner's clone; unknown attributes are the inner's."""
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    saver = HindsightSaver(SqliteSaver(conn), memory)
    saver.setup()  # SqliteSaver.setup through the bridge
    clone = saver.with_allowlist([("mymodule", "MyType")])
    assert isinstance(clone, HindsightSaver)
    assert clone.memory is memory
    # SqliteSaver versions are "<counter>.<random>" strings, unlike the base ints.
    assert str(clone.get_next_version(None, None)).startswith("0" * 31 + "1.")
    conn.close()


async def test_async_saver_takes_a_thread_only_turn_for_the_threads_user(
    memory: HindsightMemory,
) -> None:
    """AsyncHindsightSaver captures a later turn sent with only thread_id for its user."""
    async with AsyncSqliteSaver.from_conn_string(":memory:") as inner:
        graph = _graph(AsyncHindsightSaver(inner, memory))
        await graph.ainvoke({"messages": [HumanMessage("hello there")]}, _cfg("t1"))
        await graph.ainvoke(
            {"messages": [HumanMessage(FACT)]}, {"configurable": {"thread_id": "t1"}}
        )
    memory.flush()
    assert any("jasmine" in r.content for r in memory.list_memories("u1"))


def test_saver_leaves_out_answers_that_restate_tool_results(
    memory: HindsightMemory,
) -> None:
    """The bridge captures the user's words, not the answer echoing a tool result."""
    from langchain_core.messages import ToolMessage

    def tool_turn(state: MessagesState) -> dict[str, Any]:
        call = {"name": "weather", "args": {"city": "Paris"}, "id": "c1"}
        return {
            "messages": [
                AIMessage("", tool_calls=[call]),
                ToolMessage("The weather: Sunny in Paris", tool_call_id="c1"),
                AIMessage("The weather: Sunny in Paris"),
            ]
        }

    builder = StateGraph(MessagesState)
    builder.add_node("agent", tool_turn)
    builder.add_edge(START, "agent")
    graph = builder.compile(checkpointer=HindsightSaver(InMemorySaver(), memory))
    graph.invoke({"messages": [HumanMessage("I live in Lyon. Weather?")]}, _cfg("t"))
    memory.flush()
    contents = [r.content for r in memory.list_memories("u1")]
    assert any("Lyon" in c for c in contents)
    assert not any("Sunny" in c for c in contents)
