"""HindsightMiddleware in create_agent: recall, ephemeral injection, capture, reflect."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import InMemorySaver

from hindsight_lg import HindsightMemory, Kind
from hindsight_lg.checkpointers import HindsightSaver
from hindsight_lg.nodes.middleware import HindsightMiddleware
from hindsight_lg.testing import FakeToolChatModel, HashingEmbedder, InMemoryBackend

FACT = "My order number is 4417 and I prefer email over phone calls."
QUESTION = "How do I prefer to be contacted?"
CORRECTION = "That's wrong, call me instead."


def _echo(messages: list[BaseMessage]) -> AIMessage:
    blocks = [str(m.content) for m in messages if isinstance(m, SystemMessage)]
    return AIMessage("memories: " + (" ".join(blocks) or "none"))


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def _agent(
    memory: HindsightMemory,
    model: FakeToolChatModel,
    reflect: Any = True,
    **kw: Any,
) -> Any:
    return create_agent(
        model,
        tools=[],
        system_prompt="You are a support agent.",
        middleware=[HindsightMiddleware(memory, reflect=reflect)],
        **kw,
    )


def _cfg(thread: str, user: str = "u1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def test_recall_across_threads_and_users(memory: HindsightMemory) -> None:
    """Told in thread 1, the model sees it in thread 2 of the same user only."""
    model = FakeToolChatModel(respond=_echo)
    agent = _agent(memory, model, checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage(FACT)]}, _cfg("t1"))
    memory.flush()
    mine = agent.invoke({"messages": [HumanMessage(QUESTION)]}, _cfg("t2"))
    theirs = agent.invoke({"messages": [HumanMessage(QUESTION)]}, _cfg("t3", "u2"))
    assert "email over phone" in mine["messages"][-1].content
    assert "email over phone" not in theirs["messages"][-1].content


def test_memories_join_the_system_prompt_without_entering_the_thread(
    memory: HindsightMemory,
) -> None:
    """The model's system message holds prompt + memories; the state has no system message."""
    memory.capture(FACT, namespace="u1")
    model = FakeToolChatModel(respond=_echo)
    out = _agent(memory, model).invoke(
        {"messages": [HumanMessage(QUESTION)]}, _cfg("t")
    )
    system = model.calls[-1][0]
    assert isinstance(system, SystemMessage)
    assert system.content.startswith("You are a support agent.")
    assert "<memories>" in system.content
    assert [m.type for m in out["messages"]] == ["human", "ai"]
    assert "hindsight_memories" not in out


async def test_async_agent_captures_and_reflects(memory: HindsightMemory) -> None:
    """ainvoke recalls, captures the turn, and on a correction writes an unverified lesson."""
    memory.capture(FACT, namespace="u1")
    model = FakeToolChatModel(respond=_echo)
    agent = _agent(memory, model, checkpointer=InMemorySaver())
    await agent.ainvoke({"messages": [HumanMessage(QUESTION)]}, _cfg("t"))
    memory.flush()
    assert memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value]) == []
    await agent.ainvoke({"messages": [HumanMessage(CORRECTION)]}, _cfg("t"))
    memory.flush()
    lessons = memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value])
    assert [r.confidence for r in lessons] == [pytest.approx(0.6)]
    assert lessons[0].content.startswith(f"For requests like {QUESTION!r}")
    assert any(r.thread_id == "t" for r in memory.list_memories("u1"))


def test_middleware_and_bridging_saver_capture_once(memory: HindsightMemory) -> None:
    """With the middleware and HindsightSaver together, each message is captured once."""
    ids: list[str] = []
    real = memory.worker._capture

    def spy(**item: Any) -> Any:
        ids.extend(m["id"] for m in item["messages_or_text"])
        return real(**item)

    memory.worker._capture = spy
    model = FakeToolChatModel(respond=_echo)
    saver = HindsightSaver(InMemorySaver(), memory)
    out = _agent(memory, model, checkpointer=saver).invoke(
        {"messages": [HumanMessage(FACT)]}, _cfg("t1")
    )
    memory.flush()
    assert sorted(ids) == sorted(m.id for m in out["messages"])


def test_sync_reflection_is_done_when_invoke_returns(memory: HindsightMemory) -> None:
    """With reflect="sync" the lesson exists as soon as invoke returns, without flush."""
    memory.capture(FACT, namespace="u1")
    model = FakeToolChatModel(respond=_echo)
    agent = _agent(memory, model, reflect="sync", checkpointer=InMemorySaver())
    agent.invoke({"messages": [HumanMessage(QUESTION)]}, _cfg("t"))
    agent.invoke({"messages": [HumanMessage(CORRECTION)]}, _cfg("t"))
    assert memory.list_memories("u1", kinds=[Kind.EXPERIENCE.value])


def test_unknown_reflect_mode_is_refused(memory: HindsightMemory) -> None:
    """A reflect value other than a bool, "background" or "sync" raises ValueError."""
    with pytest.raises(ValueError, match="background"):
        HindsightMiddleware(memory, reflect="later")  # type: ignore[arg-type]


def test_tool_results_are_not_remembered_by_default(memory: HindsightMemory) -> None:
    """A weather tool's answer is not captured; capture_tools=True keeps it."""
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool

    from hindsight_lg.testing import tool_call

    @tool
    def weather(city: str) -> str:
        """The weather in a city."""
        return f"The weather: Sunny in {city}"

    def respond(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage(str(last.content))
        return tool_call("weather", {"city": "Paris"})

    for user, keep in (("u1", False), ("u2", True)):
        agent = create_agent(
            FakeToolChatModel(respond=respond),
            tools=[weather],
            middleware=[HindsightMiddleware(memory, reflect=False, capture_tools=keep)],
        )
        agent.invoke({"messages": [HumanMessage("I live in Paris.")]}, _cfg("t", user))
    memory.flush()
    assert not any("Sunny" in r.content for r in memory.list_memories("u1"))
    assert any("Sunny" in r.content for r in memory.list_memories("u2"))


def test_langgraph_user_id_in_context_names_the_user(memory: HindsightMemory) -> None:
    """create_agent's context with langgraph_user_id picks the tenant."""
    agent = _agent(memory, FakeToolChatModel(respond=_echo), reflect=False)
    agent.invoke(
        {"messages": [HumanMessage(FACT)]},
        {"configurable": {"thread_id": "t"}},
        context={"langgraph_user_id": "lg-7"},
    )
    memory.flush()
    assert memory.list_memories("lg-7")
