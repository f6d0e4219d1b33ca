"""Memories the agent sees but the thread never holds: ``add_hindsight``'s agent view.

A memory block written into ``messages`` is part of the thread's state: a
client streaming ``stream_mode="messages"`` (or ``"messages-tuple"`` through
LangGraph's server) receives it as a node output, and ``get_state()`` shows it
while a run is paused at an interrupt. So ``add_hindsight`` keeps the block out
of the thread: the recall node keeps the rendered block in this process
(:class:`Blocks`, a bounded cache) and writes only an opaque token to a
channel of its own (:data:`MEMORY_CHANNEL`, declared by the recall node's
input schema); the agent node is wrapped so that each call gets a copy of its
input with the block placed as a system message next to the latest user
message, exactly where the recall node used to write it, and the agent's
output is stripped of that message should it echo its input back.

Guarantees: no node output, checkpoint, stream chunk or ``get_state()`` holds
the block's text (LangGraph shows every channel in ``values``, so the token is
visible there, but it says nothing). A run resumed where the token is unknown
(another process, a restart, an evicted entry) recalls again for the latest
user message, which is what the recall node did: the agent sees the same kind
of block, at the cost of one recall.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from inspect import isclass
from typing import Any, NotRequired, TypedDict, get_type_hints

from langchain_core.messages import SystemMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langgraph.types import Command
from pydantic import BaseModel

from hindsight_lg.nodes._core import HindsightNode
from hindsight_lg.nodes._turns import EPHEMERAL_PREFIX, Position, is_ephemeral, placed

MEMORY_CHANNEL = "hindsight_memories"
"""The private state channel that holds the turn's rendered memory block."""


Refill = Callable[[Any, RunnableConfig], dict[str, Any]]
ARefill = Callable[[Any, RunnableConfig], Awaitable[dict[str, Any]]]


class Blocks:
    """Rendered memory blocks by token, the newest ``size`` kept."""

    def __init__(self, size: int = 4096) -> None:
        self._blocks: OrderedDict[str, str] = OrderedDict()
        self._size, self._lock = size, threading.Lock()

    def put(self, block: str, token: str | None = None) -> str:
        token = token or uuid.uuid4().hex
        with self._lock:
            self._blocks[token] = block
            self._blocks.move_to_end(token)
            while len(self._blocks) > self._size:
                self._blocks.popitem(last=False)
        return token

    def get(self, token: str) -> str | None:
        with self._lock:
            return self._blocks.get(token)

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()


def tokenized(recall: HindsightNode, blocks: Blocks) -> HindsightNode:
    """The recall node (``into="state"`` on :data:`MEMORY_CHANNEL`) writing a token."""

    def keep(update: dict[str, Any]) -> dict[str, Any]:
        if MEMORY_CHANNEL not in update:
            return update
        block = update[MEMORY_CHANNEL]
        return {MEMORY_CHANNEL: blocks.put(block) if block else ""}

    def sync(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return keep(recall.func(state, config))

    async def run_async(state: Any, config: RunnableConfig) -> dict[str, Any]:
        return keep(await recall.afunc(state, config))

    return HindsightNode(sync, run_async, recall.name or "hindsight_recall")


def view_schema(builder: Any, agent_schema: type[Any]) -> type[Any]:
    """The state schema and the agent's input schema, plus :data:`MEMORY_CHANNEL`.

    Keys and annotations (reducers, managed values) are copied as LangGraph
    reads them, so the channels the schema declares are the graph's own.
    """
    hints: dict[str, Any] = {}
    for schema in (builder.state_schema, agent_schema):
        declared = get_type_hints(schema, include_extras=True)
        hints.update({k: declared[k] for k in builder.schemas[schema] if k in declared})
    hints[MEMORY_CHANNEL] = NotRequired[str]
    return TypedDict("HindsightAgentInput", hints)  # type: ignore[operator, no-any-return]


def _with_block(messages: list[Any], block: str, position: Position) -> list[Any]:
    """``messages`` with the block next to the latest user message."""
    message = SystemMessage(block, id=f"{EPHEMERAL_PREFIX}{MEMORY_CHANNEL}")
    return placed(messages, message, position)


def _strip(value: Any) -> Any:
    """An agent output without the memory message, should the agent echo its input."""
    if isinstance(value, Command) and isinstance(value.update, Mapping):
        return dataclasses.replace(value, update=_strip(value.update))
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        kept = [m for m in value["messages"] if not is_ephemeral(m)]
        return {**value, "messages": kept}
    return value


class _AgentView:
    def __init__(
        self,
        inner: Runnable[Any, Any],
        schema: type[Any],
        keys: Any,
        blocks: Blocks,
        recall: HindsightNode,
    ) -> None:
        self.inner, self.schema, self.keys = inner, schema, set(keys)
        self.blocks, self.recall = blocks, recall
        self.position: Position = "after"

    def _missing(self, state: Mapping[str, Any]) -> str | None:
        """The token whose block this process does not hold, if any."""
        token = state.get(MEMORY_CHANNEL) or ""
        return token if token and self.blocks.get(token) is None else None

    def _refilled(self, token: str, update: dict[str, Any]) -> None:
        self.blocks.put(str(update.get(MEMORY_CHANNEL) or ""), token)

    def _view(self, state: Mapping[str, Any]) -> Any:
        values = {k: v for k, v in state.items() if k in self.keys}
        token = state.get(MEMORY_CHANNEL) or ""
        block = self.blocks.get(token) if token else ""
        if block:
            values["messages"] = _with_block(
                list(values.get("messages") or []), block, self.position
            )
        # The agent gets what LangGraph would have given it: its own schema.
        if isclass(self.schema) and (
            issubclass(self.schema, BaseModel) or dataclasses.is_dataclass(self.schema)
        ):
            return self.schema(**values)
        return values

    def sync(self, state: Any, config: RunnableConfig) -> Any:
        if token := self._missing(state):
            self._refilled(token, self.recall.func(state, config))
        return _strip(self.inner.invoke(self._view(state), config))

    async def run_async(self, state: Any, config: RunnableConfig) -> Any:
        if token := self._missing(state):
            self._refilled(token, await self.recall.afunc(state, config))
        return _strip(await self.inner.ainvoke(self._view(state), config))


def agent_view(
    builder: Any,
    agent: str,
    position: Position,
    recall: HindsightNode,
    blocks: Blocks,
) -> type[Any]:
    """Wrap ``builder``'s node ``agent`` so it sees the memory block; return its schema.

    ``recall`` is the recall node writing the block to :data:`MEMORY_CHANNEL`
    (run again when a token's block is not in ``blocks``). The caller
    registers the returned schema with the graph (the recall node takes it as
    ``input_schema``), which declares the channel.
    """
    spec = builder.nodes[agent]
    schema = view_schema(builder, spec.input_schema)
    keys = builder.schemas[spec.input_schema]
    impl = _AgentView(spec.runnable, spec.input_schema, keys, blocks, recall)
    impl.position = position
    node = HindsightNode(impl.sync, impl.run_async, agent)
    builder.nodes[agent] = dataclasses.replace(spec, runnable=node, input_schema=schema)
    return schema
