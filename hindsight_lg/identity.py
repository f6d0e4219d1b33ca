"""Whose memory a run reads and writes: one rule for every adapter.

The nodes, the middleware, the bridging checkpointer and the memory tools
resolve the user of a run here, and :class:`~hindsight_lg.store.HindsightStore`
maps LangGraph's ``("memories", user_id)`` to the same tenant
(:mod:`hindsight_lg.tenancy`).
The default rule takes the first non-empty value of:

1. ``configurable["langgraph_auth_user"].identity`` and
2. ``configurable["langgraph_auth_user_id"]``: what LangGraph's server sets
   from its authentication. They come first because a client cannot forge
   them, so a ``user_id`` sent along by a client never reads another user's
   memory on an authenticated server;
3. ``langgraph_user_id`` in ``configurable`` or in the context (the key
   LangMem-style code and many server deployments use);
4. ``user_id`` of the run's ``context`` (a dataclass / object attribute or a
   mapping key), then
5. ``configurable["user_id"]``.

A run that names nobody (typically ``Command(resume=...)`` or a fork from
``get_state_history()`` invoked with only ``thread_id``) keeps the user of
its thread: the thread's checkpoints are read, newest first, and the rule is
applied to their metadata (LangGraph's savers copy scalar ``configurable``
values there). A process also remembers the user of each thread it served.

Pass your own rule (any ``rule(config, context) -> user id | None``) as
``identity=`` to the nodes, ``add_hindsight``, the middleware, the savers and
the memory tools. The user's tenant in the engine is
:func:`~hindsight_lg.tenancy.user_tenant` of the id: the id itself when plain.

A run that still names nobody is *unattributed*: strict adapters raise
``ValueError``; the others log a warning and add a span event
(``hindsight.unattributed``) once per thread, and skip memory for the run.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._messages import lookup
from hindsight_lg.tenancy import user_tenant

USER_KEY = "user_id"
AGENT_KEY = "agent_id"
AUTH_USER_KEY = "langgraph_auth_user"
AUTH_USER_ID_KEY = "langgraph_auth_user_id"
LANGGRAPH_USER_KEY = "langgraph_user_id"
# LangGraph keeps the run's Runtime (with ``context``) and its checkpointer
# under these configurable keys; the checkpointer and the tools see only the
# config, so this is how they read the context and the thread's history.
_RUNTIME_KEY = "__pregel_runtime"
_CHECKPOINTER_KEY = "__pregel_checkpointer"
_REMEMBERED = 10_000  # threads whose user (or absence of one) a process keeps

#: ``rule(config, context) -> user id or None``: whose memory a run uses.
IdentityRule = Callable[[Mapping[str, Any], Any], "str | None"]

UNATTRIBUTED = (
    "hindsight-lg needs to know whose memory to use: invoke with "
    "context={'user_id': ...} or config={'configurable': {'user_id': ...}} "
    "(LangGraph's server sets langgraph_auth_user_id from its auth)"
)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who a run is for: tenant (namespace), agent id, thread id and user id."""

    namespace: str
    agent_id: str | None = None
    thread_id: str | None = None
    user_id: str | None = None


def run_context(config: Mapping[str, Any] | None) -> Any:
    """The run's LangGraph ``context`` object, if the config carries one."""
    configurable = (config or {}).get("configurable") or {}
    return getattr(configurable.get(_RUNTIME_KEY), "context", None)


def _field(obj: Any, key: str) -> Any:
    try:
        return lookup(obj, key)
    except Exception:  # server user objects raise NotImplementedError for absent fields
        return None


def default_rule(config: Mapping[str, Any], context: Any) -> str | None:
    """The documented order: server auth, ``langgraph_user_id``, context, configurable."""
    configurable = config.get("configurable") or {}
    for value in (
        _field(configurable.get(AUTH_USER_KEY), "identity"),
        configurable.get(AUTH_USER_ID_KEY),
        configurable.get(LANGGRAPH_USER_KEY),
        _field(context, LANGGRAPH_USER_KEY),
        _field(context, USER_KEY),
        configurable.get(USER_KEY),
    ):
        if value is not None and str(value) != "":
            return str(value)
    return None


# -- threads' users, remembered per process and read back from checkpoints ----


class _Threads:
    """A bounded map thread id -> user id (``""``: looked up, nobody found)."""

    def __init__(self) -> None:
        self._users: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, thread_id: str) -> str | None:
        with self._lock:
            return self._users.get(thread_id)

    def set(self, thread_id: str, user: str) -> None:
        with self._lock:
            self._users[thread_id] = user
            self._users.move_to_end(thread_id)
            while len(self._users) > _REMEMBERED:
                self._users.popitem(last=False)


# Keyed by the checkpointer, weakly: a thread id means something only to the
# saver that keeps the thread, and the saver is LangGraph's (or the user's),
# not an object of ours that could hold the map. Two engines on one saver
# share it; find_identity(saver=...) is public and takes no engine.
_THREADS: weakref.WeakKeyDictionary[Any, _Threads] = weakref.WeakKeyDictionary()
_THREADS_LOCK = threading.Lock()


def _threads_of(saver: Any) -> _Threads:
    with _THREADS_LOCK:
        try:
            found = _THREADS.get(saver)
            if found is None:
                found = _THREADS[saver] = _Threads()
        except TypeError:  # a saver without weak references: nothing is remembered
            found = _Threads()
        return found


def _thread_query(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def user_in_history(tuples: Iterable[Any], rule: IdentityRule) -> str | None:
    """The first user the rule finds in checkpoint metadata (newest first)."""
    for item in tuples:
        found = rule({"configurable": dict(item.metadata or {})}, None)
        if found:
            return found
    return None


def thread_user(saver: Any, thread_id: str, rule: IdentityRule) -> str | None:
    """The user of a thread, from this process's memory or the saver's history.

    Without a saver there is no thread to continue, so nobody is found.
    """
    if saver is None:
        return None
    known = _threads_of(saver).get(thread_id)
    if known is not None:
        return known or None
    try:
        # Lazily: the newest checkpoint that names a user ends the read.
        found = user_in_history(saver.list(_thread_query(thread_id)), rule)
    except Exception as exc:  # an unreadable history is an unattributed run
        found = _unreadable(exc)
    return _remember(saver, thread_id, found)


async def athread_user(saver: Any, thread_id: str, rule: IdentityRule) -> str | None:
    """Async twin of :func:`thread_user` (reads the saver with ``alist``)."""
    if saver is None:
        return None
    known = _threads_of(saver).get(thread_id)
    if known is not None:
        return known or None
    try:
        found = user_in_history(
            [t async for t in saver.alist(_thread_query(thread_id))], rule
        )
    except Exception as exc:  # an unreadable history is an unattributed run
        found = _unreadable(exc)
    return _remember(saver, thread_id, found)


def _unreadable(exc: Exception) -> str | None:
    """Log an unreadable thread history; nobody is found in it."""
    telemetry.get_logger().warning("thread_history_unreadable", error=repr(exc))
    return None


def _remember(saver: Any, thread_id: str, found: str | None) -> str | None:
    """Keep the thread's user (or that it has none) for this process's next turn."""
    _threads_of(saver).set(thread_id, found or "")
    return found


def remember_thread(saver: Any, thread_id: str | None, user_id: str) -> None:
    """Note the user of a thread (so a later resume without one finds it)."""
    if thread_id and saver is not None:
        _threads_of(saver).set(thread_id, user_id)


# -- resolution ----------------------------------------------------------------


def _build(
    config: Mapping[str, Any], context: Any, user: str, agent_id: str | None
) -> Identity:
    configurable = config.get("configurable") or {}
    agent = agent_id or _field(context, AGENT_KEY) or configurable.get(AGENT_KEY)
    thread = configurable.get("thread_id")
    return Identity(
        user_tenant(user),
        str(agent) if agent else None,
        str(thread) if thread else None,
        user,
    )


def _named(
    config: Mapping[str, Any] | None, context: Any, rule: IdentityRule | None
) -> tuple[Mapping[str, Any], Any, str | None]:
    config = config or {}
    ctx = context if context is not None else run_context(config)
    return config, ctx, (rule or default_rule)(config, ctx)


def find_identity(
    config: Mapping[str, Any] | None,
    context: Any = None,
    *,
    agent_id: str | None = None,
    rule: IdentityRule | None = None,
    saver: Any = None,
) -> Identity | None:
    """Tenant, agent and thread of a run, or ``None`` when no user is named.

    Args:
        config: the run's ``RunnableConfig``.
        context: the run's context (read from ``config`` when ``None``).
        agent_id: a fixed agent id that wins over context and config.
        rule: whose memory (:func:`default_rule` when ``None``).
        saver: the checkpointer whose history names the thread's user when
            the run does not (the run's own checkpointer when ``None``).
    """
    config, ctx, user = _named(config, context, rule)
    configurable = config.get("configurable") or {}
    thread = configurable.get("thread_id")
    saver = saver if saver is not None else configurable.get(_CHECKPOINTER_KEY)
    if user:
        remember_thread(saver, thread, user)
    elif thread:
        user = thread_user(saver, str(thread), rule or default_rule)
    return None if not user else _build(config, ctx, user, agent_id)


async def afind_identity(
    config: Mapping[str, Any] | None,
    context: Any = None,
    *,
    agent_id: str | None = None,
    rule: IdentityRule | None = None,
    saver: Any = None,
) -> Identity | None:
    """Async twin of :func:`find_identity` (reads the thread's history async)."""
    config, ctx, user = _named(config, context, rule)
    configurable = config.get("configurable") or {}
    thread = configurable.get("thread_id")
    saver = saver if saver is not None else configurable.get(_CHECKPOINTER_KEY)
    if user:
        remember_thread(saver, thread, user)
    elif thread:
        user = await athread_user(saver, str(thread), rule or default_rule)
    return None if not user else _build(config, ctx, user, agent_id)


# -- unattributed runs -----------------------------------------------------------

_WARNED = _Threads()


def unattributed(adapter: str, thread_id: str | None, *, strict: bool) -> None:
    """Handle a run nobody owns: raise when strict, else warn once per thread.

    Raises:
        ValueError: ``strict`` is set.
    """
    if strict:
        raise ValueError(UNATTRIBUTED)
    key = f"{adapter}\0{thread_id or ''}"
    if _WARNED.get(key) is not None:
        return
    _WARNED.set(key, "warned")
    telemetry.degrade(
        "unattributed",
        f"{adapter}: no user for this run, so memory is skipped. {UNATTRIBUTED}",
        log_event="memory_unattributed",
        adapter=adapter,
        thread_id=thread_id or "",
    )


def require_identity(
    config: Mapping[str, Any] | None,
    context: Any = None,
    *,
    agent_id: str | None = None,
    rule: IdentityRule | None = None,
) -> Identity:
    """Like :func:`find_identity` but raises when no user is named.

    Raises:
        ValueError: the rule finds no user, in the run or in its thread.
    """
    found = find_identity(config, context, agent_id=agent_id, rule=rule)
    if found is None:
        raise ValueError(UNATTRIBUTED)
    return found


__all__ = [
    "Identity",
    "IdentityRule",
    "afind_identity",
    "default_rule",
    "find_identity",
    "remember_thread",
    "require_identity",
    "run_context",
    "thread_user",
    "unattributed",
]
