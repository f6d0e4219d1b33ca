"""Whose memory a run reads and writes: one rule for every adapter.

The nodes, the middleware, the bridging checkpointer, :class:`HindsightStore`
and the memory tools all resolve the namespace (user / tenant) of a run here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hindsight_lg._messages import lookup

USER_KEY = "user_id"
AGENT_KEY = "agent_id"
# LangGraph keeps the run's Runtime (with ``context``) under this configurable
# key; the checkpointer sees only the config, so this is how it reads context.
_RUNTIME_KEY = "__pregel_runtime"


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a run is for: namespace (user / tenant), agent id and thread id."""

    namespace: str
    agent_id: str | None = None
    thread_id: str | None = None


def run_context(config: Mapping[str, Any] | None) -> Any:
    """The run's LangGraph ``context`` object, if the config carries one."""
    configurable = (config or {}).get("configurable") or {}
    return getattr(configurable.get(_RUNTIME_KEY), "context", None)


def find_identity(
    config: Mapping[str, Any] | None,
    context: Any = None,
    *,
    agent_id: str | None = None,
) -> Identity | None:
    """Namespace, agent and thread of a run, or ``None`` when no user is named.

    Args:
        config: the run's ``RunnableConfig``.
        context: the run's context (read from ``config`` when ``None``).
        agent_id: a fixed agent id that wins over context and config.
    """
    configurable = (config or {}).get("configurable") or {}
    ctx = context if context is not None else run_context(config)
    user = lookup(ctx, USER_KEY) or configurable.get(USER_KEY)
    if not user:
        return None
    agent = agent_id or lookup(ctx, AGENT_KEY) or configurable.get(AGENT_KEY)
    thread = configurable.get("thread_id")
    return Identity(
        str(user), str(agent) if agent else None, str(thread) if thread else None
    )


def require_identity(
    config: Mapping[str, Any] | None,
    context: Any = None,
    *,
    agent_id: str | None = None,
) -> Identity:
    """Like :func:`find_identity` but raises when no user is named.

    Raises:
        ValueError: neither the context nor ``config["configurable"]`` has a user id.
    """
    found = find_identity(config, context, agent_id=agent_id)
    if found is None:
        raise ValueError(
            "hindsight-lg needs to know whose memory to use: invoke with "
            "context={'user_id': ...} or "
            "config={'configurable': {'user_id': ...}}"
        )
    return found


__all__ = ["Identity", "find_identity", "require_identity", "run_context"]
