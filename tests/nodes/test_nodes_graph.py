"""add_hindsight and the recall / capture / reflect nodes in full offline agent loops."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph

from hindsight_lg import HindsightMemory, Kind
from hindsight_lg.nodes import HindsightState, add_hindsight, recall_node
from hindsight_lg.testing import FakeToolChatModel

GraphFactory = Any


def cfg(thread: str, user: str | None = "u1") -> dict[str, Any]:
    configurable = {"thread_id": thread}
    if user:
        configurable["user_id"] = user
    return {"configurable": configurable}


FACT = "I am allergic to peanuts and I love jasmine tea."
QUESTION = "Which tea do I love?"
CORRECTION = "That's wrong, it is green tea now."


def _ask_then_correct(graph: Any, config: dict[str, Any]) -> None:
    """Ask the question, then correct the answer in the next turn of the thread."""
    _ask(graph, QUESTION, config)
    _ask(graph, CORRECTION, config)


def _ask(graph: Any, text: str, config: dict[str, Any]) -> list[Any]:
    out = graph.invoke({"messages": [HumanMessage(text)]}, config)
    return list(out["messages"])


def _spy_on_captures(memory: HindsightMemory) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []
    real = memory.worker._capture

    def spy(**item: Any) -> Any:
        seen.append(item)
        return real(**item)

    memory.worker._capture = spy
    return seen


def test_told_in_thread_1_recalled_in_thread_2_for_same_user_only(
    memory: HindsightMemory, make_graph: GraphFactory, model: FakeToolChatModel
) -> None:
    """A fact captured in thread 1 reaches the model in thread 2 for u1, not for u2."""
    graph = make_graph(InMemorySaver())
    _ask(graph, FACT, cfg("t1"))
    memory.flush()
    same_user = _ask(graph, QUESTION, cfg("t2"))
    other_user = _ask(graph, QUESTION, cfg("t3", user="u2"))
    assert "jasmine tea" in same_user[-1].content
    assert "jasmine tea" not in other_user[-1].content
    assert other_user[-1].content == "memories: none"


def test_memory_message_is_ephemeral(
    memory: HindsightMemory, make_graph: GraphFactory, model: FakeToolChatModel
) -> None:
    """The model sees a system message of memories, but the thread does not keep it."""
    graph = make_graph(InMemorySaver())
    _ask(graph, FACT, cfg("t1"))
    memory.flush()
    thread = _ask(graph, QUESTION, cfg("t2"))
    seen = model.calls[-1]
    assert any(isinstance(m, SystemMessage) and "<memories>" in m.content for m in seen)
    assert not any(isinstance(m, SystemMessage) for m in thread)
    state = graph.get_state(cfg("t2"))
    assert [m.type for m in state.values["messages"]] == ["human", "ai"]


def test_tool_loop_keeps_memories_and_captures_once(
    memory: HindsightMemory, make_graph: GraphFactory, model: FakeToolChatModel
) -> None:
    """Across a tool call the model keeps seeing memories; the turn is captured once.

    The tool result and the answer that restates it are not captured.
    """
    graph = make_graph(InMemorySaver())
    _ask(graph, FACT, cfg("t1"))
    memory.flush()
    captured = _spy_on_captures(memory)
    thread = _ask(graph, "please look up jasmine tea for me", cfg("t2"))
    assert [m.type for m in thread] == ["human", "ai", "tool", "ai"]
    assert all(
        any(isinstance(m, SystemMessage) for m in call) for call in model.calls[-2:]
    )
    memory.flush()
    ids = [m["id"] for item in captured for m in item["messages_or_text"]]
    assert sorted(ids) == sorted([thread[0].id, thread[1].id])
    assert len(ids) == len(set(ids))


def test_reflection_writes_unverified_experience_and_reinforces_used(
    memory: HindsightMemory, make_graph: GraphFactory
) -> None:
    """A used memory is reinforced without a lesson; a corrected run keeps a 0.6 lesson
    out of recall."""
    graph = make_graph(InMemorySaver())
    _ask(graph, FACT, cfg("t1"))
    memory.flush()
    fact = next(r for r in memory.list_memories("u1") if "jasmine" in r.content)
    _ask(graph, QUESTION, cfg("t2"))
    memory.flush()
    after = memory.get("u1", fact.id)
    assert after is not None and after.access_count > fact.access_count
    assert memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value]) == []
    _ask_then_correct(graph, cfg("t3"))
    memory.flush()
    lessons = memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value])
    assert len(lessons) == 1 and "jasmine" in lessons[0].content
    assert lessons[0].confidence == pytest.approx(0.6)
    recalled = memory.recall(QUESTION, namespace="u1", timeout=None)
    assert lessons[0].id not in recalled.ids


def test_context_names_the_user_before_configurable(
    memory: HindsightMemory, make_graph: GraphFactory
) -> None:
    """The run's context user_id wins over config['configurable']['user_id']."""

    @dataclass
    class Ctx:
        user_id: str

    graph = make_graph(InMemorySaver())
    graph.invoke(
        {"messages": [HumanMessage(FACT)]},
        cfg("t1", user="ignored"),
        context=Ctx("ctx"),
    )
    memory.flush()
    assert memory.list_memories("ctx")
    assert memory.list_memories("ignored") == []


def test_a_run_without_user_fails_with_instructions(make_graph: GraphFactory) -> None:
    """No user id anywhere raises ValueError saying how to pass one."""
    graph = make_graph(InMemorySaver())
    with pytest.raises(ValueError, match="user_id"):
        graph.invoke({"messages": [HumanMessage("hi")]}, cfg("t1", user=None))


async def test_async_ainvoke_and_astream(
    memory: HindsightMemory, make_graph: GraphFactory
) -> None:
    """ainvoke captures and astream recalls, with the same nodes."""
    graph = make_graph(InMemorySaver())
    await graph.ainvoke({"messages": [HumanMessage(FACT)]}, cfg("t1"))
    memory.flush()
    last: dict[str, Any] = {}
    async for chunk in graph.astream(
        {"messages": [HumanMessage(QUESTION)]}, cfg("t2"), stream_mode="values"
    ):
        last = chunk
    assert "jasmine tea" in last["messages"][-1].content


def test_state_mode_writes_the_block_to_a_state_key(memory: HindsightMemory) -> None:
    """recall_node(into='state') fills state['memories'] and adds no message."""
    memory.capture(FACT, namespace="u1")
    builder = StateGraph(HindsightState)
    builder.add_node("recall", recall_node(memory, into="state"))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", END)
    out = builder.compile().invoke({"messages": [HumanMessage(QUESTION)]}, cfg("t"))
    assert "jasmine tea" in out["memories"]
    assert [m.type for m in out["messages"]] == ["human"]


def test_a_turn_that_recalls_nothing_clears_the_last_block(
    memory: HindsightMemory,
) -> None:
    """A user message with no text recalls nothing, and last turn's block goes."""
    memory.capture(FACT, namespace="u1")
    builder = StateGraph(HindsightState)
    builder.add_node("recall", recall_node(memory, into="state"))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(checkpointer=InMemorySaver())
    first = graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("t"))
    assert "jasmine tea" in first["memories"]
    second = graph.invoke({"messages": [HumanMessage("")]}, cfg("t"))
    assert "" == second["memories"]


def test_add_hindsight_refuses_unknown_agent(memory: HindsightMemory) -> None:
    """Naming a node that does not exist raises ValueError."""
    builder = StateGraph(MessagesState)
    builder.add_node("llm", lambda s: {"messages": []})
    builder.add_edge(START, "llm")
    with pytest.raises(ValueError, match="no node named"):
        add_hindsight(builder, memory=memory)


def test_sync_reflection_is_done_when_invoke_returns(
    memory: HindsightMemory, make_graph: GraphFactory
) -> None:
    """With reflect="sync" the lesson is stored before invoke returns."""
    memory.capture(FACT, namespace="u1")
    graph = make_graph(InMemorySaver(), reflect="sync")
    _ask_then_correct(graph, cfg("t2"))
    assert memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value])


def test_background_reflection_waits_for_flush(
    memory: HindsightMemory, make_graph: GraphFactory
) -> None:
    """The default reflection runs on the worker: after flush, the lesson is stored."""
    memory.capture(FACT, namespace="u1")
    graph = make_graph(InMemorySaver())
    gate = threading.Event()
    memory.worker.defer(lambda: gate.wait(5))  # hold the worker: nothing can run yet
    _ask_then_correct(graph, cfg("t2"))
    assert memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value]) == []
    gate.set()
    memory.flush()
    assert memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value])


def test_memory_message_can_sit_before_the_user_message(
    memory: HindsightMemory, model: FakeToolChatModel
) -> None:
    """position="before" puts the memory block just before the latest user message."""
    memory.capture(FACT, namespace="u1")
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_edge(START, "agent")
    add_hindsight(builder, memory=memory, reflect=False, position="before")
    graph = builder.compile(checkpointer=InMemorySaver())
    _ask(graph, "hello", cfg("t1"))
    thread = _ask(graph, QUESTION, cfg("t1"))
    seen = model.calls[-1]
    assert [m.type for m in seen] == ["human", "ai", "system", "human"]
    assert "<memories>" in seen[2].content
    assert [m.type for m in thread] == ["human", "ai", "human", "ai"]


async def test_nodes_run_directly_sync_and_async(memory: HindsightMemory) -> None:
    """A node is a runnable: invoke and ainvoke give the same update."""
    memory.capture(FACT, namespace="u1")
    node = recall_node(memory, timeout=None)
    state = {"messages": [HumanMessage(QUESTION, id="q1")]}
    config = {"configurable": {"user_id": "u1"}}
    sync_out = node.invoke(state, config)
    async_out = await node.ainvoke(state, config)
    assert "jasmine" in sync_out["messages"][0].content
    assert async_out["messages"][0].content == sync_out["messages"][0].content


def test_reflection_sees_the_answer_a_new_turn_corrects() -> None:
    """The turn judged by reflection starts with the exchange before the current one."""
    from langchain_core.messages import AIMessage

    from hindsight_lg.nodes._turns import reflection_turn

    thread = [
        HumanMessage("q1", id="1"),
        AIMessage("a1", id="2"),
        HumanMessage("q2", id="3"),
        AIMessage("a2", id="4"),
        HumanMessage("That's wrong", id="5"),
        AIMessage("fixed", id="6"),
    ]
    assert [m.id for m in reflection_turn(thread)] == ["3", "4", "5", "6"]
    assert [m.id for m in reflection_turn(thread[:2])] == ["1", "2"]


@pytest.mark.parametrize("hostile", ["binary\x00data", "half a pair \ud800"])
def test_a_message_no_store_keeps_never_ends_the_run(
    memory: HindsightMemory,
    make_graph: GraphFactory,
    model: FakeToolChatModel,
    hostile: str,
) -> None:
    """A client's NUL or lone surrogate is left out of the capture; the run answers."""
    graph = make_graph(InMemorySaver())
    out = graph.invoke(
        {"messages": [HumanMessage(hostile), HumanMessage(FACT)]}, cfg("t1")
    )
    memory.flush()
    assert out["messages"][-1].content  # the model answered
    contents = [r.content for r in memory.list_memories("u1", history=True)]
    assert any("jasmine tea" in c for c in contents)
    assert not any(hostile in c for c in contents)
