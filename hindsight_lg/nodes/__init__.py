"""LangGraph building blocks: recall / capture / reflect nodes, wiring, middleware.

Whose memory a run uses follows one rule (:mod:`hindsight_lg.identity`):
LangGraph server auth, ``langgraph_user_id``, the run's ``context``, then
``config["configurable"]["user_id"]``, or your own ``identity=`` callable;
``agent_id`` names the agent (optional). The memory tools
(:mod:`hindsight_lg.nodes.tools`) follow the same rule;
``fenced_store_tool`` gives tools of other libraries that answer store items
(LangMem's search tool) the same data-not-instructions fence.
``HindsightMiddleware`` (for ``langchain.agents.create_agent``) is imported
lazily: it needs the ``agents`` extra.

Example:
    >>> from hindsight_lg.nodes import add_hindsight, recall_node  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired

from langgraph.graph import MessagesState

from hindsight_lg.identity import (
    Identity,
    IdentityRule,
    find_identity,
    require_identity,
)
from hindsight_lg.nodes._core import (
    capture_node,
    memory_message,
    recall_node,
    reflect_node,
)
from hindsight_lg.nodes.graph import add_hindsight
from hindsight_lg.nodes.tools import (
    fenced_store_tool,
    manage_memory_tool,
    memory_tools,
    search_memory_tool,
)

if TYPE_CHECKING:
    from hindsight_lg.nodes.middleware import HindsightMiddleware


class HindsightState(MessagesState):
    """``MessagesState`` plus the key ``recall_node(into="state")`` writes."""

    memories: NotRequired[str]


def __getattr__(name: str) -> Any:
    if name == "HindsightMiddleware":
        from hindsight_lg.nodes.middleware import HindsightMiddleware

        return HindsightMiddleware
    raise AttributeError(name)


__all__ = [
    "HindsightMiddleware",
    "HindsightState",
    "Identity",
    "IdentityRule",
    "add_hindsight",
    "capture_node",
    "fenced_store_tool",
    "find_identity",
    "manage_memory_tool",
    "memory_message",
    "memory_tools",
    "recall_node",
    "reflect_node",
    "require_identity",
    "search_memory_tool",
]
