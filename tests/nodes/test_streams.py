"""What a chat UI reads never holds the memory block: streams, paused state, history."""

from __future__ import annotations

from typing import Annotated, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from pydantic import BaseModel

from hindsight_lg import HindsightMemory
from hindsight_lg.nodes import add_hindsight
from hindsight_lg.testing import FakeToolChatModel

FACT = "I am allergic to peanuts and I love jasmine tea."
QUESTION = "Which tea do I love?"


def cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": "u1"}}


def _leaks(messages: list[Any]) -> list[Any]:
    """System messages or other non-answers that carry the memory block."""
    return [
        m
        for m in messages
        if not isinstance(m, AIMessage)
        and "<memories>" in str(getattr(m, "content", m))
    ]


def _told(memory: HindsightMemory) -> None:
    memory.capture(FACT, namespace="u1")


def test_messages_stream_never_carries_the_memory_block(
    memory: HindsightMemory, make_graph: Any, model: FakeToolChatModel
) -> None:
    """stream_mode="messages" emits the answer, not the memories the model saw."""
    _told(memory)
    graph = make_graph(InMemorySaver())
    streamed = [
        message
        for message, _meta in graph.stream(
            {"messages": [HumanMessage(QUESTION)]}, cfg("t1"), stream_mode="messages"
        )
    ]
    assert any("jasmine" in str(m.content) for m in model.calls[-1])
    assert any(isinstance(m, AIMessage) and "jasmine" in m.content for m in streamed)
    assert _leaks(streamed) == []


async def test_async_streams_never_carry_the_memory_block(
    memory: HindsightMemory, make_graph: Any
) -> None:
    """astream in messages, values and updates modes carries no memory block."""
    _told(memory)
    graph = make_graph(InMemorySaver())
    chunks: list[Any] = []
    async for _mode, chunk in graph.astream(
        {"messages": [HumanMessage(QUESTION)]},
        cfg("t1"),
        stream_mode=["messages", "values", "updates"],
    ):
        chunks.append(chunk)
    assert "jasmine" in str(chunks)
    messages = [c[0] for c in chunks if isinstance(c, tuple)]
    assert messages and _leaks(messages) == []
    values = [c for c in chunks if isinstance(c, dict) and "messages" in c]
    assert values and _leaks([m for v in values for m in v["messages"]]) == []
    assert all("<memories>" not in str(v.get("hindsight_memories")) for v in values)


def test_paused_state_and_history_never_show_the_memory_block(
    memory: HindsightMemory, model: FakeToolChatModel
) -> None:
    """While a run waits at an interrupt, get_state() and the history hold no block."""
    _told(memory)

    def agent(state: MessagesState) -> dict[str, Any]:
        answer = model.invoke(state["messages"])
        approved = interrupt("send this answer?")
        return {"messages": [AIMessage(f"{answer.content} ({approved})")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    graph = add_hindsight(builder, memory=memory, reflect=False).compile(
        checkpointer=InMemorySaver()
    )
    graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("t1"))
    paused = graph.get_state(cfg("t1"))
    assert paused.next == ("agent",)
    assert _leaks(paused.values["messages"]) == []
    assert "allergic" not in str(paused.values)
    done = graph.invoke(Command(resume="yes"), cfg("t1"))
    assert "jasmine" in done["messages"][-1].content
    history = [s.values.get("messages", []) for s in graph.get_state_history(cfg("t1"))]
    assert _leaks([m for messages in history for m in messages]) == []


class PydanticState(BaseModel):
    messages: Annotated[list[BaseMessage], add_messages]
    mood: str = "calm"


def test_an_agent_with_a_pydantic_state_gets_its_own_type_and_the_memories(
    memory: HindsightMemory, model: FakeToolChatModel
) -> None:
    """The agent node receives its declared state type, memories included."""
    got: list[Any] = []
    _told(memory)

    def agent(state: PydanticState) -> dict[str, Any]:
        got.append(state)
        return {"messages": [model.invoke(state.messages)]}

    builder = StateGraph(PydanticState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    graph = add_hindsight(builder, memory=memory, reflect=False).compile()
    out = graph.invoke({"messages": [HumanMessage(QUESTION)]}, cfg("t1"))
    assert isinstance(got[0], PydanticState) and got[0].mood == "calm"
    assert "jasmine" in out["messages"][-1].content
    assert _leaks(out["messages"]) == []


def test_a_resume_elsewhere_recalls_again(
    memory: HindsightMemory, model: FakeToolChatModel
) -> None:
    """A run resumed in a process that never saw its block gets the memories anyway."""
    _told(memory)
    seen: list[str] = []

    def agent(state: MessagesState) -> dict[str, Any]:
        seen.append(str([m.content for m in state["messages"]]))
        approved = interrupt("go on?")
        return {"messages": [model.invoke(state["messages"]), AIMessage(approved)]}

    saver = InMemorySaver()

    def build() -> Any:
        builder = StateGraph(MessagesState)
        builder.add_node("agent", agent)
        builder.add_edge(START, "agent")
        return add_hindsight(builder, memory=memory, reflect=False).compile(
            checkpointer=saver
        )

    build().invoke({"messages": [HumanMessage(QUESTION)]}, cfg("t1"))
    build().invoke(Command(resume="yes"), cfg("t1"))  # a fresh graph: no blocks
    assert len(seen) == 2 and all("jasmine" in s for s in seen)
