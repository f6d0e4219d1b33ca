"""The engine as the jobs see it: one protocol for reflect, erasure and transfer.

The jobs run on the whole engine but sit beside it, not above it: they name
this protocol, never :class:`~hindsight_lg.memory.engine.HindsightMemory`
(which would make the engine and its jobs import each other). The engine
satisfies it; mypy checks that wherever an engine is handed to a job.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.embeddings.base import Embedder
from hindsight_lg.memory.durability import CaptureWorker, Spool
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import RecallResult
from hindsight_lg.model import Kind, MemoryRecord


class Engine(Protocol):
    """The parts and methods of the engine that the jobs use."""

    @property
    def backend(self) -> MemoryBackend:
        """The store (behind the engine's read cache and group commit)."""

    @property
    def embedder(self) -> Embedder:
        """The dense embedding model."""

    @property
    def policy(self) -> Policy:
        """Every tunable."""

    @property
    def clock(self) -> Callable[[], float]:
        """Returns "now" as POSIX seconds."""

    @property
    def spool(self) -> Spool | None:
        """The capture spool, if captures are spooled."""

    @property
    def worker(self) -> CaptureWorker:
        """The background worker (captures and deferred jobs)."""

    def recall(
        self,
        query: str,
        *,
        namespace: str,
        k: int | None = ...,
        agent_id: str | None = ...,
        timeout: float | None = ...,
    ) -> RecallResult:
        """See :meth:`HindsightMemory.recall`."""

    def get(self, namespace: str, memory_id: str) -> MemoryRecord | None:
        """See :meth:`HindsightMemory.get`."""

    def list_memories(
        self,
        namespace: str,
        *,
        kinds: Sequence[str] = ...,
        agent_id: str | None = ...,
    ) -> list[MemoryRecord]:
        """See :meth:`HindsightMemory.list_memories`."""

    def remember(
        self,
        content: str,
        *,
        namespace: str,
        kind: Kind | str = ...,
        confidence: float | None = ...,
        agent_id: str | None = ...,
        meta: dict[str, Any] | None = ...,
        source_ids: Sequence[str] | None = ...,
    ) -> MemoryRecord:
        """See :meth:`HindsightMemory.remember`."""

    def reinforce(self, namespace: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """See :meth:`HindsightMemory.reinforce`."""

    def weaken(
        self, namespace: str, ids: Sequence[str], factor: float = ...
    ) -> list[MemoryRecord]:
        """See :meth:`HindsightMemory.weaken`."""

    def forget(
        self,
        namespace: str,
        ids: Sequence[str] | None = ...,
        *,
        thread_id: str | None = ...,
    ) -> int:
        """See :meth:`HindsightMemory.forget`."""
