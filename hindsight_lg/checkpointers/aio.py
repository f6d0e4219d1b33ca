"""``AsyncHindsightSaver``: the bridging saver for natively async inner savers."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from hindsight_lg.checkpointers._base import (
    OPTIONAL,
    BaseHindsightSaver,
    aforward,
    forward,
    has_parent,
)


class AsyncHindsightSaver(BaseHindsightSaver):
    """Wrap an async LangGraph saver (``AsyncSqliteSaver``, ``AsyncPostgresSaver``).

    Async methods are forwarded to the inner saver's async methods, sync ones
    to its sync methods (which async savers allow only off their event loop).

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from hindsight_lg import HindsightMemory
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
        >>> saver = AsyncHindsightSaver(InMemorySaver(), memory)
        >>> saver.inner.__class__.__name__
        'InMemorySaver'
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.inner.aget_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        async for item in self.inner.alist(
            config, filter=filter, before=before, limit=limit
        ):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        who = await self._awho(config, new_versions)
        if who is not None and self._needs_seed(who):
            parent = await self.inner.aget_tuple(config) if has_parent(config) else None
            # Off the loop: the claim may be an engine's first use, which opens
            # it (store setup, spool replay).
            await asyncio.to_thread(self._seed, who, parent)
        saved = await self.inner.aput(config, checkpoint, metadata, new_versions)
        if who is not None:
            # submit() appends to the capture spool on disk: off the event loop,
            # as LangGraph's server insists (it rejects blocking calls there).
            await asyncio.to_thread(self._submit, who, checkpoint)
        return saved

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self.inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.inner.adelete_thread(thread_id)
        if self.forget_on_delete:
            await asyncio.to_thread(self._forget_thread, thread_id)

    # Optional methods: forwarded only when the inner saver has them (see
    # _base._variant), async to the inner's async ones, sync to its sync ones.
    _optional = {
        **{name: (name, forward(name)) for name in OPTIONAL},
        **{f"a{name}": (f"a{name}", aforward(f"a{name}")) for name in OPTIONAL},
    }
