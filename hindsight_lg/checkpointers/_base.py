"""What the sync and async bridging savers share: the capture decision and forwarding.

The bridge sits in front of any LangGraph saver. Short-term thread state stays
in that saver; at every ``put`` of a root graph (``checkpoint_ns == ""``) that
changed ``messages``, the messages not captured yet go to the memory's
background worker. "Not captured yet" is tracked by message id in the worker's
claims, which the capture node and the middleware share, so a message is
captured once however it is seen. The first time a thread is seen in a process,
the parent checkpoint's messages are claimed without capture: they were
captured by whichever process wrote them, so restarts, replays and forks never
capture twice.

``delete_for_runs``, ``copy_thread`` and ``prune`` are optional in LangGraph
(the base class raises ``NotImplementedError``), and LangGraph detects them by
type: a method counts as implemented when the saver's class overrides it
(``langgraph-checkpoint-conformance``, and LangGraph's server, which falls back
to its own ``list``/``put`` copy of a thread when ``acopy_thread`` is not
overridden). So a bridge is built as a subclass that defines exactly the
optional methods its inner saver overrides (:func:`_variant`, one class per
capability set, cached): what the inner saver lacks stays the base class's,
and every fallback that looks for it runs as it would on the bare saver.
"""

from __future__ import annotations

import asyncio
import builtins
import copy
import threading
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from hindsight_lg import telemetry
from hindsight_lg._messages import capturable, plain_messages
from hindsight_lg.identity import (
    Identity,
    IdentityRule,
    afind_identity,
    find_identity,
    unattributed,
)
from hindsight_lg.memory import HindsightMemory


class BaseHindsightSaver(BaseCheckpointSaver[Any]):
    """Shared logic of :class:`HindsightSaver` and :class:`AsyncHindsightSaver`.

    Args:
        inner: the saver that keeps thread state (InMemory, SQLite, Postgres...).
        memory: the long-term memory new turns flow into.
        capture: turn bridging off keeps a pure pass-through saver.
        forget_on_delete: ``delete_thread`` also forgets the memories captured
            from that thread (right to be forgotten per conversation).
        agent_id: fixed agent id for captured memories (else from the run).
        scope: scope of captured memories.
        identity: whose memory (see :mod:`hindsight_lg.identity`; the
            documented default rule when ``None``). A put that names no user
            takes the user of its thread, read from the inner saver's history.
        strict: raise from ``put`` when a run that changed ``messages`` names
            no user; by default the bridge logs a warning once per thread,
            captures nothing, and the checkpoint is saved.
        capture_tools: also capture what the assistant said right after a
            tool result (skipped by default: it mostly restates tool output).
    """

    # Optional methods a subclass can forward: public name -> (the inner
    # saver's method it needs, the forwarding function). See _variant().
    _optional: ClassVar[dict[str, tuple[str, Callable[..., Any]]]] = {}

    def __new__(cls, inner: Any = None, *args: Any, **kwargs: Any) -> Any:
        # copy.copy() and unpickling call __new__(cls) with no arguments; the
        # class they pass is already a variant.
        if inner is None:
            return super().__new__(cls)
        return super().__new__(_variant(cls, inner))

    def __init__(
        self,
        inner: BaseCheckpointSaver[Any],
        memory: HindsightMemory,
        *,
        capture: bool = True,
        forget_on_delete: bool = False,
        agent_id: str | None = None,
        scope: str = "private",
        identity: IdentityRule | None = None,
        strict: bool = False,
        capture_tools: bool = False,
    ) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.memory = memory
        self.capture = capture
        self.forget_on_delete = forget_on_delete
        self.agent_id = agent_id
        self.scope = scope
        self.identity = identity
        self.strict = strict
        self.capture_tools = capture_tools
        self._seen_threads: dict[str, set[str]] = {}
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        # Anything the bridge does not define (setup(), conn, ...) is the inner
        # saver's; guard "inner" itself so copies and unpickling cannot recurse.
        if name == "inner" or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.inner, name)

    # -- the capture decision --------------------------------------------------

    def _wants(self, config: RunnableConfig, new_versions: ChannelVersions) -> bool:
        """Whether this put may carry a turn to capture (root graph, new messages)."""
        configurable = config.get("configurable") or {}
        return (
            self.capture
            and not configurable.get("checkpoint_ns", "")
            and "messages" in new_versions
        )

    def _settle(
        self, found: Identity | None, config: RunnableConfig
    ) -> Identity | None:
        if found is None:
            thread = (config.get("configurable") or {}).get("thread_id")
            unattributed(type(self).__name__, thread, strict=self.strict)
        return found

    def _who(
        self, config: RunnableConfig, new_versions: ChannelVersions
    ) -> Identity | None:
        """Whose turn this put carries, or ``None`` when nothing is to be captured."""
        if not self._wants(config, new_versions):
            return None
        found = find_identity(
            config, agent_id=self.agent_id, rule=self.identity, saver=self.inner
        )
        return self._settle(found, config)

    async def _awho(
        self, config: RunnableConfig, new_versions: ChannelVersions
    ) -> Identity | None:
        """Async twin of :meth:`_who` (reads the thread's history with ``alist``)."""
        if not self._wants(config, new_versions):
            return None
        found = await afind_identity(
            config, agent_id=self.agent_id, rule=self.identity, saver=self.inner
        )
        return self._settle(found, config)

    def _needs_seed(self, who: Identity) -> bool:
        with self._lock:
            return who.thread_id not in self._seen_threads.get(who.namespace, set())

    def _seed(self, who: Identity, parent: CheckpointTuple | None) -> None:
        """Claim the parent's messages: they belong to turns captured before."""
        if parent is not None:
            old = plain_messages(_channel_messages(parent.checkpoint))
            self.memory.worker.claim_messages(who.namespace, old)
        with self._lock:
            self._seen_threads.setdefault(who.namespace, set()).add(who.thread_id or "")

    def _submit(self, who: Identity, checkpoint: Checkpoint) -> None:
        messages = capturable(_channel_messages(checkpoint), tools=self.capture_tools)
        try:
            self.memory.submit(
                messages,
                namespace=who.namespace,
                agent_id=who.agent_id,
                thread_id=who.thread_id,
                scope=self.scope,
            )
        except Exception as exc:  # memory trouble must never fail a checkpoint
            telemetry.get_logger().error("bridge_capture_failed", error=repr(exc))

    def _namespaces_of(self, thread_id: str) -> list[str]:
        with self._lock:
            known = [ns for ns, t in self._seen_threads.items() if thread_id in t]
        return known or self.memory.namespaces()

    def _forget_thread(self, thread_id: str) -> None:
        self.memory.flush()  # queued captures of the thread must not land later
        for namespace in self._namespaces_of(thread_id):
            self.memory.forget(namespace, thread_id=thread_id)
        with self._lock:
            for threads in self._seen_threads.values():
                threads.discard(thread_id)

    # -- sync methods: forwarded, with capture at put ---------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.inner.get_tuple(config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        return self.inner.list(config, filter=filter, before=before, limit=limit)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        who = self._who(config, new_versions)
        if who is not None and self._needs_seed(who):
            parent = self.inner.get_tuple(config) if has_parent(config) else None
            self._seed(who, parent)
        saved = self.inner.put(config, checkpoint, metadata, new_versions)
        if who is not None:
            self._submit(who, checkpoint)
        return saved

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.inner.put_writes(config, writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        self.inner.delete_thread(thread_id)
        if self.forget_on_delete:
            self._forget_thread(thread_id)

    # -- plain forwarding --------------------------------------------------------

    @property
    def config_specs(self) -> builtins.list[Any]:
        return list(self.inner.config_specs)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.inner.get_next_version(current, channel)

    def with_allowlist(
        self, extra_allowlist: Collection[tuple[str, ...]]
    ) -> BaseHindsightSaver:
        inner = self.inner.with_allowlist(extra_allowlist)
        if inner is self.inner:
            return self
        clone = copy.copy(self)
        clone.inner = inner
        clone.serde = inner.serde
        return clone

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return self.inner.get_delta_channel_history(config=config, channels=channels)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        return await self.inner.aget_delta_channel_history(
            config=config, channels=channels
        )


_VARIANTS: dict[tuple[type[Any], frozenset[str]], type[Any]] = {}
_VARIANTS_LOCK = threading.Lock()


def _variant(cls: type[Any], inner: BaseCheckpointSaver[Any]) -> type[Any]:
    """``cls`` with exactly the optional methods ``inner`` implements.

    The subclass keeps ``cls``'s name, so ``repr`` and ``isinstance`` read as
    before; it is built once per class and capability set.
    """
    present = frozenset(
        name for name, (needs, _) in cls._optional.items() if implements(inner, needs)
    )
    with _VARIANTS_LOCK:
        found = _VARIANTS.get((cls, present))
        if found is None:
            body = {name: cls._optional[name][1] for name in present}
            body["__module__"], body["__qualname__"] = cls.__module__, cls.__qualname__
            found = _VARIANTS[(cls, present)] = type(cls.__name__, (cls,), body)
        return found


def forward(name: str) -> Callable[..., Any]:
    """A method that calls the inner saver's ``name`` with the same arguments."""

    def method(self: BaseHindsightSaver, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.inner, name)(*args, **kwargs)

    method.__name__ = name
    return method


def aforward(name: str) -> Callable[..., Any]:
    """An async method that awaits the inner saver's ``name``."""

    async def method(self: BaseHindsightSaver, *args: Any, **kwargs: Any) -> Any:
        return await getattr(self.inner, name)(*args, **kwargs)

    method.__name__ = name
    return method


def in_thread(sync_name: str) -> Callable[..., Any]:
    """An async method that runs the bridge's sync ``sync_name`` in a worker thread."""

    async def method(self: BaseHindsightSaver, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self, sync_name), *args, **kwargs)

    method.__name__ = f"a{sync_name}"
    return method


OPTIONAL = ("delete_for_runs", "copy_thread", "prune")
"""LangGraph's optional saver methods (each with an ``a``-prefixed async twin)."""


def implements(saver: BaseCheckpointSaver[Any], method: str) -> bool:
    """Whether ``saver`` overrides an optional method of ``BaseCheckpointSaver``.

    The same test LangGraph's conformance suite uses to detect capabilities.
    """
    return getattr(type(saver), method, None) is not getattr(
        BaseCheckpointSaver, method, None
    )


def _channel_messages(checkpoint: Checkpoint) -> list[Any]:
    value = checkpoint.get("channel_values", {}).get("messages")
    return list(value) if isinstance(value, (list, tuple)) else []


def has_parent(config: RunnableConfig) -> bool:
    return bool((config.get("configurable") or {}).get("checkpoint_id"))
