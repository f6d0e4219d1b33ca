"""Memory tools beside capture: what a tool writes in a turn is the only memory it leaves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from hindsight_lg import HindsightMemory
from hindsight_lg.nodes import memory_tools
from hindsight_lg.nodes.middleware import HindsightMiddleware
from hindsight_lg.testing import (
    FakeToolChatModel,
    HashingEmbedder,
    InMemoryBackend,
    tool_call,
)

TOLD = "Remember that Mia turns 7 on March 3"


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def _cfg(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": "u1"}}


def _remembering(messages: list[BaseMessage]) -> AIMessage:
    """Store what the user asks to remember with the tool, then confirm."""
    last = messages[-1]
    if isinstance(last, ToolMessage) or "Remember" not in str(last.content):
        return AIMessage("Noted.")
    return tool_call(
        "manage_memory", {"action": "create", "content": "Mia turns 7 on March 3."}
    )


def _active(memory: HindsightMemory) -> list[str]:
    return [r.content for r in memory.list_memories("u1")]


@pytest.mark.parametrize("run", ["invoke", "ainvoke"])
async def test_a_remembered_fact_is_stored_once(
    memory: HindsightMemory, run: str
) -> None:
    """The tool's memory is the turn's only one; the middleware does not capture it again."""
    agent = create_agent(
        FakeToolChatModel(respond=_remembering),
        tools=memory_tools(memory),
        middleware=[HindsightMiddleware(memory, reflect=False)],
    )
    request = {"messages": [HumanMessage(TOLD)]}
    if run == "invoke":
        agent.invoke(request, _cfg("t1"))
    else:
        await agent.ainvoke(request, _cfg("t1"))
    await memory.aflush()
    assert _active(memory) == ["Mia turns 7 on March 3."]


def test_an_update_then_leaves_no_stale_copy(memory: HindsightMemory) -> None:
    """Correcting the tool's memory leaves nothing that still says March 3."""
    agent = create_agent(
        FakeToolChatModel(respond=_remembering),
        tools=memory_tools(memory),
        middleware=[HindsightMiddleware(memory, reflect=False)],
    )
    agent.invoke({"messages": [HumanMessage(TOLD)]}, _cfg("t1"))
    memory.flush()
    (only,) = memory.list_memories("u1")
    memory.update("u1", only.id, content="Mia turns 7 on March 4.")
    assert not any("March 3" in c for c in _active(memory))


def test_what_the_tool_saved_last_turn_teaches_no_lesson(
    memory: HindsightMemory,
) -> None:
    """The next turn's reflection never says the user had to repeat the tool's memory."""
    agent = create_agent(
        FakeToolChatModel(respond=_remembering),
        tools=memory_tools(memory),
        middleware=[HindsightMiddleware(memory, reflect="sync")],
        checkpointer=InMemorySaver(),
    )
    for said in (TOLD, "I'm vegetarian and I love tofu."):
        agent.invoke({"messages": [HumanMessage(said)]}, _cfg("t1"))
        memory.flush()
    assert memory.list_memories("u1", kinds=["experience"]) == []
