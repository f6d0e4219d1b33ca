"""LangGraph building blocks: recall / capture / reflect nodes, wiring, middleware.

Whose memory a run uses comes from the run's ``context`` first, then
``config["configurable"]``: ``user_id`` is the namespace (required) and
``agent_id`` the agent (optional). ``HindsightMiddleware`` (for
``langchain.agents.create_agent``) is imported lazily: it needs the
``agents`` extra.

Example:
    >>> from hindsight_lg.nodes import add_hindsight, recall_node  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NotRequired

from langgraph.graph import MessagesState

from hindsight_lg.identity import Identity, find_identity, require_identity
from hindsight_lg.nodes._core import (
    capture_node,
    memory_message,
    recall_node,
    reflect_node,
)
from hindsight_lg.nodes.graph import add_hindsight

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
    "add_hindsight",
    "capture_node",
    "find_identity",
    "memory_message",
    "recall_node",
    "reflect_node",
    "require_identity",
]
