"""The three LangGraph nodes: recall before the agent, capture after, reflect at the end.

Each factory returns a :class:`HindsightNode`: a runnable with a sync and an
async body, so the same node serves ``invoke``/``stream`` and
``ainvoke``/``astream`` without blocking an event loop. Like the plain
functions LangGraph wraps with ``add_node``, it opens no callback run of its
own (the graph already traces the node), which keeps the capture node's time
on the turn's path to a queue hand-off.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Literal

from langchain_core.messages import RemoveMessage, SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from hindsight_lg.identity import Identity, IdentityRule
from hindsight_lg.memory import (
    DEFAULT_TIMEOUT,
    DefaultTimeout,
    HindsightMemory,
    RecallResult,
)
from hindsight_lg.nodes._adapter import Who, arecalled, hand_off, recalled
from hindsight_lg.nodes._run import ReflectMode, Reflector
from hindsight_lg.nodes._turns import EPHEMERAL_PREFIX, Position, is_ephemeral, placed

Into = Literal["messages", "state"]
Body = Callable[[Any, RunnableConfig], dict[str, Any]]
AsyncBody = Callable[[Any, RunnableConfig], Awaitable[dict[str, Any]]]


class HindsightNode(Runnable[Any, dict[str, Any]]):
    """A graph node with a sync and an async body and no callback run of its own.

    Args:
        func: ``func(state, config)`` for ``invoke`` / ``stream``.
        afunc: ``await afunc(state, config)`` for ``ainvoke`` / ``astream``.
        name: the node's default name.
    """

    def __init__(self, func: Body, afunc: AsyncBody, name: str) -> None:
        self.func, self.afunc, self.name = func, afunc, name

    def invoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the sync body."""
        return self.func(input, config if config is not None else ensure_config())

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """Run the async body."""
        return await self.afunc(
            input, config if config is not None else ensure_config()
        )


Node = HindsightNode


def _messages(state: Any) -> list[Any]:
    raw = state.get("messages") if isinstance(state, Mapping) else None
    if raw is None:
        raw = getattr(state, "messages", None)
    if raw is None:
        raise ValueError("hindsight nodes need a 'messages' key in the graph state")
    return list(raw)


def _drop_ephemeral(messages: list[Any]) -> list[Any]:
    return [RemoveMessage(id=m.id) for m in messages if is_ephemeral(m)]


def _placed_before_user(messages: list[Any], block: SystemMessage) -> list[Any]:
    """The whole thread rewritten with ``block`` just before the latest user message.

    ``add_messages`` can only append, so the update replaces every message
    (``REMOVE_ALL_MESSAGES``) while keeping their ids, which capture claims by.
    """
    kept = [m for m in messages if not is_ephemeral(m)]
    return [RemoveMessage(id=REMOVE_ALL_MESSAGES), *placed(kept, block, "before")]


def memory_message(result: RecallResult) -> SystemMessage | None:
    """The recalled memories as a system message with an ephemeral id."""
    prompt = result.to_prompt()
    if not prompt:
        return None
    return SystemMessage(prompt, id=f"{EPHEMERAL_PREFIX}{uuid.uuid4().hex}")


class _Recall:
    def __init__(
        self,
        memory: HindsightMemory,
        who: Who,
        into: Into,
        state_key: str,
        position: Position,
        **opts: Any,
    ) -> None:
        self.memory, self.who, self.opts = memory, who, opts
        self.into, self.state_key, self.position = into, state_key, position

    def _update(
        self, messages: list[Any], result: RecallResult | None
    ) -> dict[str, Any]:
        if result is None:  # nothing recalled: last turn's block must not stand in
            if self.into == "state":
                return {self.state_key: ""}
            stale: list[Any] = _drop_ephemeral(messages)
            return {"messages": stale} if stale else {}
        if self.into == "state":
            return {self.state_key: result.to_prompt()}
        message = memory_message(result)
        if self.position == "before" and message is not None:
            return {"messages": _placed_before_user(messages, message)}
        updates: list[Any] = _drop_ephemeral(messages)
        if message is not None:
            updates.append(message)
        return {"messages": updates} if updates else {}

    def sync(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages, who = _messages(state), self.who.find(config)
        return self._update(messages, recalled(self.memory, who, messages, self.opts))

    async def run_async(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        messages, who = _messages(state), await self.who.afind(config)
        result = await arecalled(self.memory, who, messages, self.opts)
        return self._update(messages, result)


def recall_node(
    memory: HindsightMemory,
    *,
    into: Into = "messages",
    state_key: str = "memories",
    budget_tokens: int | None = None,
    k: int | None = None,
    include_experience: bool = False,
    agent_id: str | None = None,
    timeout: float | None | DefaultTimeout = DEFAULT_TIMEOUT,
    position: Position = "after",
    identity: IdentityRule | None = None,
    strict: bool = True,
) -> Node:
    """A node that recalls memories for the latest user message.

    Args:
        memory: the engine to recall from.
        into: ``"messages"`` adds an ephemeral system message (removed again by
            :func:`capture_node`, so it never stays in the thread); ``"state"``
            writes the rendered block to ``state[state_key]`` instead.
        state_key: the state key for ``into="state"``.
        position: with ``into="messages"``, ``"after"`` appends the memory
            message after the user message; ``"before"`` puts it just before
            the latest user message (the update then rewrites the thread's
            message list, ids kept).
        budget_tokens: size of the memory block.
        k: at most this many memories.
        include_experience: also give unverified experience lessons.
        agent_id: fixed agent id (else from context / ``configurable``).
        timeout: recall deadline in seconds (policy default; ``None`` waits).
        identity: whose memory (see :mod:`hindsight_lg.identity`; the
            documented default rule when ``None``).
        strict: raise when a run names no user; ``False`` logs a warning once
            per thread and recalls nothing.

    Returns:
        A runnable node for ``StateGraph.add_node``.

    Raises:
        ValueError: at run time, when ``strict`` and the run names no user
            (see :mod:`hindsight_lg.identity`).
    """
    impl = _Recall(
        memory,
        Who("recall_node", agent_id, identity, strict),
        into,
        state_key,
        position,
        budget_tokens=budget_tokens,
        k=k,
        include_experience=include_experience,
        timeout=timeout,
    )
    return HindsightNode(impl.sync, impl.run_async, "hindsight_recall")


def capture_node(
    memory: HindsightMemory,
    *,
    agent_id: str | None = None,
    scope: str = "private",
    identity: IdentityRule | None = None,
    strict: bool = True,
    capture_tools: bool = False,
) -> Node:
    """A node that hands the finished turn to the background capture worker.

    It returns at once (the write pipeline runs behind the turn) and removes
    the ephemeral memory message the recall node added.

    Args:
        memory: the engine to capture into.
        agent_id: fixed agent id (else from context / ``configurable``).
        scope: ``private``, ``team`` or ``global`` for the new memories.
        identity: whose memory (the documented default rule when ``None``).
        strict: raise when a run names no user; ``False`` logs a warning once
            per thread and captures nothing.
        capture_tools: also capture what the assistant said right after a
            tool result (by default such echoes of tool output are skipped).

    Returns:
        A runnable node for ``StateGraph.add_node``.
    """
    who = Who("capture_node", agent_id, identity, strict)

    def handoff(found: Identity | None, messages: list[Any]) -> dict[str, Any]:
        if found is not None:
            hand_off(memory, found, messages, scope=scope, tools=capture_tools)
        stale = _drop_ephemeral(messages)
        return {"messages": stale} if stale else {}

    def capture(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return handoff(who.find(config), _messages(state))

    async def acapture(state: Any, config: RunnableConfig) -> dict[str, Any]:
        found = await who.afind(config)
        # submit() fsyncs the capture spool: off the event loop (LangGraph's
        # server rejects blocking calls there).
        return await asyncio.to_thread(handoff, found, _messages(state))

    return HindsightNode(capture, acapture, "hindsight_capture")


def reflect_node(
    memory: HindsightMemory,
    *,
    llm: Any = None,
    agent_id: str | None = None,
    mode: ReflectMode = "background",
    identity: IdentityRule | None = None,
    strict: bool = True,
) -> Node:
    """A node that reflects on the finished run (see :mod:`hindsight_lg.memory.jobs.reflect`).

    Args:
        memory: the engine to judge and update.
        llm: optional chat model for the judgement (heuristics without one).
        agent_id: fixed agent id (else from context / ``configurable``).
        mode: ``"background"`` queues the reflection on the capture worker
            (the run does not wait; ``memory.flush()`` does); ``"sync"`` runs
            it inline, for tests and scripts that need it done on return.
        identity: whose memory (the documented default rule when ``None``).
        strict: raise when a run names no user; ``False`` warns and skips.

    Returns:
        A runnable node; it changes no state.

    Raises:
        ValueError: unknown ``mode``.
    """
    who = Who("reflect_node", agent_id, identity, strict)
    reflector = Reflector(memory, llm, mode)

    def run(state: Any, config: RunnableConfig) -> dict[str, Any]:
        if (found := who.find(config)) is not None:
            reflector.run(found, _messages(state))
        return {}

    async def arun(state: Any, config: RunnableConfig) -> dict[str, Any]:
        if (found := await who.afind(config)) is not None:
            await reflector.arun(found, _messages(state))
        return {}

    return HindsightNode(run, arun, "hindsight_reflect")
