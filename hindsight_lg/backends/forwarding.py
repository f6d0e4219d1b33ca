"""The base of every wrapper over a backend: each call handed to ``inner``.

A wrapper over a :class:`~hindsight_lg.backends.base.MemoryBackend` (the read
cache, the engine's span per store call, the group commit's drain before each
call, the capture path's staged writes) is a backend itself. Subclassing
:class:`ForwardingBackend` gives it the whole protocol at once, so no wrapper
lists the methods it copies and a method added to the protocol reaches every
wrapper here, in one place.

Two ways to extend it:

- override :meth:`ForwardingBackend._forward` to add the same thing to every
  call (a span, a drain): it receives the method's name and its arguments;
- override a method to change that call (a cache serving reads itself).

It has the optional features of :mod:`hindsight_lg.backends.optional` but
``DenseIds`` and ``LiteStore`` (which a read cache uses and does not pass on),
and answers each as a backend without it would where ``inner`` lacks it.

``capabilities`` is always the inner backend's, read when asked: ``setup()``
learns what a Milvus server can do, whichever wrapper it was called through.

Example:
    >>> from hindsight_lg.backends import InMemoryBackend, Where
    >>> class Counting(ForwardingBackend):
    ...     calls = 0
    ...     def _forward(self, name, /, *args, **kwargs):
    ...         self.calls += 1
    ...         return super()._forward(name, *args, **kwargs)
    >>> backend = Counting(InMemoryBackend())
    >>> backend.count("u42", Where()), backend.calls
    (0, 1)
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from hindsight_lg.backends.base import (
    Capabilities,
    Hit,
    MemoryBackend,
    Where,
    asked_vectors,
)
from hindsight_lg.backends.optional import (
    STAMPS_PRUNE_S,
    CombinedWrites,
    HoldsCold,
    LiveCheck,
    LocalDense,
    Refresh,
    StoredModel,
    WriteStamps,
    combines_writes,
    stored_model,
)
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord


class ForwardingBackend:
    """A :class:`~hindsight_lg.backends.base.MemoryBackend` that forwards to ``inner``.

    Args:
        inner: the backend (or wrapper) every call goes to.
    """

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Call ``inner``'s method ``name``; the one hook for every call."""
        return getattr(self.inner, name)(*args, **kwargs)

    @property
    def capabilities(self) -> Capabilities:
        """The inner backend's capabilities (current after ``setup()``)."""
        return self.inner.capabilities

    def setup(self, *, dim: int, model_id: str) -> None:
        self._forward("setup", dim=dim, model_id=model_id)

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        self._forward("upsert", namespace, records)

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        found: list[MemoryRecord] = self._forward(
            "get", namespace, ids, vectors=vectors
        )
        return found

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        found: list[MemoryRecord] = self._forward(
            "query", namespace, where, limit=limit, vectors=vectors
        )
        return found

    def search_dense(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        hits: list[Hit] = self._forward(
            "search_dense",
            namespace,
            vector,
            where,
            limit=limit,
            **asked_vectors(vectors),
        )
        return hits

    def search_dense_local(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Dense search from a read cache below, if any; else :meth:`search_dense`.

        The write path's near-duplicate check runs once per captured event and
        takes the cache's exact scan over a store round trip (:class:`LocalDense`).
        """
        local = isinstance(self.inner, LocalDense)
        hits: list[Hit] = self._forward(
            "search_dense_local" if local else "search_dense",
            namespace,
            vector,
            where,
            limit=limit,
            **asked_vectors(vectors),
        )
        return hits

    def stored_model(self) -> tuple[str, int] | None:
        """The inner backend's recorded embedding model (:class:`StoredModel`)."""
        if not isinstance(self.inner, StoredModel):
            return None
        model: tuple[str, int] | None = self._forward("stored_model")
        return model

    def combined_writes(self) -> bool:
        """Whether the store below combines concurrent writes (:class:`CombinedWrites`)."""
        if not isinstance(self.inner, CombinedWrites):
            return False
        found: bool = self._forward("combined_writes")
        return found

    def live(self, namespace: str, ids: Sequence[str]) -> list[str]:
        """Of ``ids`` a read served, those the store still holds (in order).

        Asks a read cache below whose reads may lag (:class:`LiveCheck`); with
        none, every id is live and nothing is read.
        """
        if not isinstance(self.inner, LiveCheck):
            return list(ids)
        found: list[str] = self._forward("live", namespace, ids)
        return found

    def write_stamps(self, namespace: str) -> dict[str, int] | None:
        """Other writers' counters for ``namespace``, if kept (:class:`WriteStamps`)."""
        if not isinstance(self.inner, WriteStamps):
            return None
        found: dict[str, int] | None = self._forward("write_stamps", namespace)
        return found

    def holds_cold(self, namespace: str) -> bool:
        """Whether ``namespace`` may hold cold memories (:class:`HoldsCold`)."""
        if not isinstance(self.inner, HoldsCold):
            return True
        found: bool = self._forward("holds_cold", namespace)
        return found

    def refresh(self, namespace: str) -> None:
        """Tell a read cache below that a recall of ``namespace`` starts (:class:`Refresh`)."""
        if isinstance(self.inner, Refresh):
            self._forward("refresh", namespace)

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        hits: list[Hit] = self._forward(
            "search_lexical", namespace, terms, where, limit=limit
        )
        return hits

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        return int(self._forward("delete", namespace, ids))

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        self._forward("add_edges", namespace, edges)

    def edges(
        self, namespace: str, ids: Sequence[str], *, types: Sequence[EdgeType] = ()
    ) -> list[Edge]:
        found: list[Edge] = self._forward("edges", namespace, ids, types=types)
        return found

    def all_edges(self, namespace: str) -> list[Edge]:
        found: list[Edge] = self._forward("all_edges", namespace)
        return found

    def delete_edges(self, namespace: str, ids: Sequence[str]) -> int:
        return int(self._forward("delete_edges", namespace, ids))

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        self._forward("append_audit", namespace, entries)

    def audit(self, namespace: str, memory_id: str | None = None) -> list[AuditEntry]:
        found: list[AuditEntry] = self._forward("audit", namespace, memory_id)
        return found

    def purge_audit(
        self, namespace: str, memory_ids: Sequence[str] | None = None
    ) -> int:
        return int(self._forward("purge_audit", namespace, memory_ids))

    def namespaces(self) -> list[str]:
        found: list[str] = self._forward("namespaces")
        return found

    def count(self, namespace: str, where: Where) -> int:
        return int(self._forward("count", namespace, where))

    def flush(self) -> None:
        self._forward("flush")

    def exclusive(self, namespace: str, resource: str) -> AbstractContextManager[None]:
        held: AbstractContextManager[None] = self._forward(
            "exclusive", namespace, resource
        )
        return held

    def close(self) -> None:
        self._forward("close")


__all__ = ["STAMPS_PRUNE_S", "ForwardingBackend", "combines_writes", "stored_model"]
