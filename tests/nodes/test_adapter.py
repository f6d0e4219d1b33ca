"""The node, the middleware and the tools read a run alike (``nodes/_adapter.py``).

One test per place where they used to differ: each runs the same turn through
every path and asserts the same outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from hindsight_lg import HindsightMemory
from hindsight_lg.nodes import (
    capture_node,
    memory_tools,
    recall_node,
)
from hindsight_lg.nodes.middleware import HindsightMiddleware
from hindsight_lg.nodes.tools import rows_of
from hindsight_lg.testing import FakeToolChatModel, tool_call

FACT = "My order number is 4417 and I prefer email over phone calls."
ANSWER = "Noted, email it is."
QUESTION = "How do I prefer to be contacted?"
BLOCK = "Recalled memories: the user once lived in Porto."
TOLD = "Remember that Mia turns 7 on March 3"
SAVED = "Mia turns 7 on March 3."

Respond = Callable[[list[BaseMessage]], AIMessage]
GraphFactory = Callable[..., Any]


def _cfg(thread: str, user: str = "u1") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread, "user_id": user}}


def _thread() -> list[BaseMessage]:
    """A thread whose previous recall left its ephemeral block behind."""
    return [
        HumanMessage(FACT, id="h0"),
        AIMessage(ANSWER, id="a0"),
        SystemMessage(BLOCK, id="hindsight-memories-stale"),
        HumanMessage(QUESTION, id="h1"),
    ]


def _agent(memory: HindsightMemory, respond: Respond) -> Any:
    """create_agent with the memory tools and the middleware."""
    return create_agent(
        FakeToolChatModel(respond=respond),
        tools=memory_tools(memory),
        middleware=[HindsightMiddleware(memory, reflect=False)],
    )


def _runner(
    path: str, memory: HindsightMemory, tool_graph: GraphFactory, respond: Respond
) -> Any:
    """The memory tools in add_hindsight's graph ("node") or in create_agent."""
    if path == "node":
        return tool_graph(respond, memory_tools(memory), reflect=False)
    return _agent(memory, respond)


def _spy_contexts(
    memory: HindsightMemory, monkeypatch: pytest.MonkeyPatch
) -> list[list[str]]:
    contexts: list[list[str]] = []
    real = memory.recall

    def spy(query: str, **kwargs: Any) -> Any:
        contexts.append(list(kwargs["context"]))
        return real(query, **kwargs)

    monkeypatch.setattr(memory, "recall", spy)
    return contexts


def test_an_ephemeral_block_is_no_recall_context_for_node_or_middleware(
    memory: HindsightMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both read the talk before the question as context, never a stale memory block."""
    contexts = _spy_contexts(memory, monkeypatch)
    recall_node(memory).invoke({"messages": _thread()}, _cfg("t1"))
    _agent(memory, lambda _: AIMessage("ok")).invoke(
        {"messages": _thread()}, _cfg("t2")
    )
    assert [[FACT, ANSWER], [FACT, ANSWER]] == contexts


def _remembering(messages: list[BaseMessage]) -> AIMessage:
    """Save what the user asks to remember with the manage tool, then confirm."""
    last = messages[-1]
    if isinstance(last, ToolMessage) or "Remember" not in str(last.content):
        return AIMessage("Noted.")
    return tool_call("manage_memory", {"action": "create", "content": SAVED})


@pytest.mark.parametrize("path", ["node", "middleware"])
@pytest.mark.parametrize("message_id", ["m1", "m" * 600, "m\x00nul"])
def test_a_message_the_tool_saved_is_not_captured_again(
    memory: HindsightMemory, tool_graph: GraphFactory, path: str, message_id: str
) -> None:
    """Whatever its id, the message the tool saved is claimed by capture's key."""
    _runner(path, memory, tool_graph, _remembering).invoke(
        {"messages": [HumanMessage(TOLD, id=message_id)]}, _cfg("t1")
    )
    memory.flush()
    assert [SAVED] == [r.content for r in memory.list_memories("u1")]


def _searching(messages: list[BaseMessage]) -> AIMessage:
    """Search memory for the user's message, then answer with what the tool said."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return AIMessage(str(last.content))
    return tool_call("search_memory", {"query": "order number email"})


def _found(out: dict[str, Any]) -> list[str]:
    return [row["content"] for row in rows_of(str(out["messages"][-1].content))]


@pytest.mark.parametrize("path", ["node", "middleware"])
def test_the_search_tool_leaves_out_what_this_turn_became_as_recall_does(
    memory: HindsightMemory, tool_graph: GraphFactory, path: str
) -> None:
    """Recall and search leave out what this very turn's message became, not more."""
    memory.capture([HumanMessage(FACT, id="now")], namespace="u1")
    recalled = recall_node(memory).invoke(
        {"messages": [HumanMessage(FACT, id="now")]}, _cfg("t0")
    )
    run = _runner(path, memory, tool_graph, _searching)
    out = run.invoke({"messages": [HumanMessage(FACT, id="now")]}, _cfg("t1"))
    later = run.invoke({"messages": [HumanMessage(FACT, id="later")]}, _cfg("t2"))
    assert ({}, [], True) == (recalled, _found(out), FACT in _found(later))


def test_capture_node_and_middleware_capture_the_same_turn(
    memory: HindsightMemory,
) -> None:
    """The same finished turn leaves the same memories through either path."""
    turn = [*_thread(), AIMessage("By email.", id="a1")]
    capture_node(memory).invoke({"messages": turn}, _cfg("t1", "by-node"))
    _agent(memory, lambda _: AIMessage("By email.", id="a1")).invoke(
        {"messages": _thread()}, _cfg("t2", "by-middleware")
    )
    memory.flush()
    node = sorted(r.content for r in memory.list_memories("by-node"))
    middleware = sorted(r.content for r in memory.list_memories("by-middleware"))
    assert node and node == middleware
