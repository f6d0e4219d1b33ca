"""Offline agents for the node tests: a scripted tool-calling model in a StateGraph."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import BaseTool, tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from hindsight_lg import HindsightMemory
from hindsight_lg.nodes import add_hindsight
from hindsight_lg.testing import (
    FakeToolChatModel,
    HashingEmbedder,
    InMemoryBackend,
    tool_call,
)


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the knowledge base."""
    return f"nothing found about {topic}"


def respond(messages: list[BaseMessage]) -> AIMessage:
    """Call `lookup` once when asked to look something up, else echo memories."""
    last = [m for m in messages if not isinstance(m, SystemMessage)][-1]
    if "look up" in str(last.content) and not isinstance(last, ToolMessage):
        return tool_call("lookup", {"topic": "tea"})
    blocks = [str(m.content) for m in messages if isinstance(m, SystemMessage)]
    return AIMessage("memories: " + (" ".join(blocks) or "none"))


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


@pytest.fixture
def model() -> FakeToolChatModel:
    return FakeToolChatModel(respond=respond)


GraphFactory = Callable[..., Any]


def _compiled(
    memory: HindsightMemory,
    model: FakeToolChatModel,
    tools: list[BaseTool],
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    **options: Any,
) -> Any:
    """recall -> agent (with a tool loop over ``tools``) -> capture -> reflect."""
    bound = model.bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"])]}

    async def aagent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await bound.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", RunnableLambda(agent, afunc=aagent))
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    add_hindsight(builder, memory=memory, **options)
    return builder.compile(checkpointer=checkpointer)


@pytest.fixture
def make_graph(memory: HindsightMemory, model: FakeToolChatModel) -> GraphFactory:
    """Build recall -> agent (with a tool loop) -> capture -> reflect, compiled."""

    def build(
        checkpointer: BaseCheckpointSaver[Any] | None = None, **options: Any
    ) -> Any:
        return _compiled(memory, model, [lookup], checkpointer, **options)

    return build


@pytest.fixture
def tool_graph(memory: HindsightMemory) -> GraphFactory:
    """Build the same graph with other tools and a model scripted by ``respond``."""

    def build(
        respond: Callable[[list[BaseMessage]], AIMessage],
        tools: list[BaseTool],
        **options: Any,
    ) -> Any:
        return _compiled(memory, FakeToolChatModel(respond=respond), tools, **options)

    return build
