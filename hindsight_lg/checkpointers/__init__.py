"""Bridging checkpointers: any LangGraph saver in front, long-term memory behind.

``HindsightSaver`` wraps a sync saver (``InMemorySaver``, ``SqliteSaver``,
``PostgresSaver``); ``AsyncHindsightSaver`` (in ``aio.py``) wraps an async one
(``AsyncSqliteSaver``, ``AsyncPostgresSaver``).
"""

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
    forward,
    in_thread,
)

_DONE = object()


class HindsightSaver(BaseHindsightSaver):
    """Wrap a sync LangGraph saver; new turns flow into long-term memory at ``put``.

    Every method is forwarded to ``inner``; of LangGraph's optional ones
    (``delete_for_runs``, ``copy_thread``, ``prune``) only those ``inner``
    implements are defined, so LangGraph's fallbacks run for the rest. The async twins run the sync
    methods in a worker thread, so a sync-only saver such as ``SqliteSaver``
    also serves ``ainvoke``/``astream``; for a natively async saver use
    :class:`~hindsight_lg.checkpointers.aio.AsyncHindsightSaver`.

    Example:
        >>> from langgraph.checkpoint.memory import InMemorySaver
        >>> from hindsight_lg import HindsightMemory
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
        >>> saver = HindsightSaver(InMemorySaver(), memory)
        >>> saver.get_tuple({"configurable": {"thread_id": "t1"}}) is None
        True
    """

    # -- async twins: the sync saver in a worker thread ------------------------

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        items = self.list(config, filter=filter, before=before, limit=limit)
        while (item := await asyncio.to_thread(next, items, _DONE)) is not _DONE:
            yield item  # type: ignore[misc]

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await asyncio.to_thread(
            self.put, config, checkpoint, metadata, new_versions
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    # Optional methods: forwarded only when the inner saver has them (see
    # _base._variant); their async twins run the sync ones in a thread.
    _optional = {
        **{name: (name, forward(name)) for name in OPTIONAL},
        **{f"a{name}": (name, in_thread(name)) for name in OPTIONAL},
    }


def __getattr__(name: str) -> Any:
    if name == "AsyncHindsightSaver":
        from hindsight_lg.checkpointers.aio import AsyncHindsightSaver

        return AsyncHindsightSaver
    raise AttributeError(name)


__all__ = ["AsyncHindsightSaver", "BaseHindsightSaver", "HindsightSaver"]
