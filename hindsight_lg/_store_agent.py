"""Which agent a :class:`~hindsight_lg.store.HindsightStore` call is made for.

LangGraph hands a store no config (``batch`` gets operations only), yet a
private memory is for its own agent only, on the store path as on every
other. The agent is, in this order:

1. the store's own, ``HindsightStore(memory, agent_id=...)`` (a store built
   per agent, as a fixed ``agent_id=`` wins on the nodes and tools);
2. the agent of the run the call is made in (a node's ``get_store()``,
   ``runtime.store``, a tool such as LangMem's), read from the run's config
   the way :mod:`hindsight_lg.identity` reads it: ``agent_id`` of the run's
   ``context``, then ``configurable["agent_id"]``.

Outside a run, or in a run that names no agent, there is none, and the store
shows the whole namespace, as ``memory.recall`` does without ``agent_id``: an
application or an operator reading its own data, not an agent.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_config

from hindsight_lg._messages import lookup
from hindsight_lg.identity import AGENT_KEY, run_context


def _field(obj: Any, key: str) -> Any:
    try:
        return lookup(obj, key)
    except Exception:  # a context object may raise for an absent field
        return None


def calling_agent(fixed: str | None) -> str | None:
    """The agent a store call reads and writes for (``None``: no agent named).

    Args:
        fixed: the store's own agent id, which wins when set.
    """
    if fixed:
        return fixed
    try:
        config = get_config()
    except RuntimeError:  # not inside a run: nobody to read for
        return None
    configurable = config.get("configurable") or {}
    agent = _field(run_context(config), AGENT_KEY) or configurable.get(AGENT_KEY)
    return str(agent) if agent else None
