"""What the nodes, the middleware and the checkpointer share about one run.

*Who*: the namespace (user) and agent id come from the run's LangGraph
``context`` first, then ``config["configurable"]`` (keys ``user_id`` and
``agent_id``). *What was recalled*: a small ledger, kept per memory engine,
remembers the ids recalled at the start of a thread's run so reflection at its
end can judge them. *Which messages*: helpers that find the current turn and
the ephemeral memory message.
"""

from __future__ import annotations

import dataclasses
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hindsight_lg.memory._messages import _lookup
from hindsight_lg.memory.recall import RecallResult

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
    user = _lookup(ctx, USER_KEY) or configurable.get(USER_KEY)
    if not user:
        return None
    agent = agent_id or _lookup(ctx, AGENT_KEY) or configurable.get(AGENT_KEY)
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


# -- the ledger ---------------------------------------------------------------


@dataclass(slots=True)
class RecallNote:
    """What was recalled at the start of a run: query, ids, and when."""

    query: str
    ids: list[str] = field(default_factory=list)
    at: float = 0.0


class RunLedger:
    """Recall notes per (namespace, thread), read once by reflection."""

    def __init__(self) -> None:
        self._notes: dict[tuple[str, str], RecallNote] = {}
        self._lock = threading.Lock()

    def note(self, who: Identity, note: RecallNote) -> None:
        """Remember what the run of ``who`` recalled."""
        with self._lock:
            self._notes[(who.namespace, who.thread_id or "")] = note

    def pop(self, who: Identity) -> RecallNote | None:
        """Take the note of the run of ``who`` (``None`` when nothing was noted)."""
        with self._lock:
            return self._notes.pop((who.namespace, who.thread_id or ""), None)


_LEDGERS: weakref.WeakKeyDictionary[Any, RunLedger] = weakref.WeakKeyDictionary()
_LEDGERS_LOCK = threading.Lock()


def ledger_for(memory: Any) -> RunLedger:
    """The ledger of one memory engine (shared by its nodes and middleware)."""
    with _LEDGERS_LOCK:
        ledger = _LEDGERS.get(memory)
        if ledger is None:
            ledger = _LEDGERS[memory] = RunLedger()
        return ledger


def reflection_args(memory: Any, who: Identity, llm: Any) -> dict[str, Any]:
    """Keyword arguments of ``reflect`` for the run of ``who`` (takes its ledger note)."""
    note = ledger_for(memory).pop(who)
    return {
        "namespace": who.namespace,
        "agent_id": who.agent_id,
        "thread_id": who.thread_id,
        "recalled_ids": note.ids if note else [],
        "query": note.query if note else "",
        "recalled_at": note.at if note else None,
        "llm": llm,
    }


def without_turn(result: RecallResult, turn: Sequence[Any]) -> RecallResult:
    """Drop memories captured from the current turn: the model already has them."""
    ids = {str(_lookup(m, "id")) for m in turn if _lookup(m, "id")}
    kept = [m for m in result.memories if not ids & set(m.record.source_ids)]
    if len(kept) == len(result.memories):
        return result
    return dataclasses.replace(result, memories=kept)
