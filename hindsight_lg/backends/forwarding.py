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
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord

#: The optional fast path of a read cache (an exact dense search of the
#: cached vectors, no store round trip); backends without it search the store.
LOCAL_DENSE = "search_dense_local"
#: The optional check of a read cache whose reads may lag other processes'
#: writes (a server's): which ids the store still holds. Backends without it
#: are never behind, so every id they served is live.
LIVE = "live"
#: The optional count of other processes' writes to a namespace, by writer
#: (``write_stamps(namespace) -> dict | None``): a server's read cache reloads
#: a namespace when they move. ``None``, or no such method: nobody else writes.
STAMPS = "write_stamps"
#: Seconds after its last write that a writer's stamp rows may be deleted; a
#: read cache must reload every namespace more often than this.
STAMPS_PRUNE_S = 7 * 86400.0
#: The optional "a recall of this namespace starts": a read cache that can lag
#: checks it is current once, so the recall's later reads and its live check
#: need no round trip. Backends without it need nothing.
REFRESH = "refresh"
#: The optional "may ``namespace`` hold cold memories?" of a read cache
#: (``holds_cold(namespace) -> bool``): recall skips its dense search of cold
#: memories where the answer is no. Backends without it: maybe.
HOLDS_COLD = "holds_cold"
#: The optional "writes sent at once share the store's calls"
#: (``combined_writes() -> bool``, a Milvus server): the group commit then
#: writes a round's tenants at once. Backends without it: one after another.
COMBINED_WRITES = "combined_writes"
#: The optional answer to "which embedding model made this store's vectors":
#: ``stored_model() -> (model_id, dim) | None``, asked before ``setup()`` by an
#: engine given no embedder. Backends without it adopt nothing.
STORED_MODEL = "stored_model"


def stored_model(backend: MemoryBackend) -> tuple[str, int] | None:
    """The (model id, dim) ``backend`` records for its vectors, if it says.

    ``None`` for a new store, or a backend without :data:`STORED_MODEL`.
    """
    read = getattr(backend, STORED_MODEL, None)
    if read is None:
        return None
    model: tuple[str, int] | None = read()
    return model


def combines_writes(backend: MemoryBackend) -> bool:
    """Whether ``backend`` combines writes sent at once (:data:`COMBINED_WRITES`)."""
    ask = getattr(backend, COMBINED_WRITES, None)
    return bool(ask()) if ask is not None else False


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
        takes the cache's exact scan over a store round trip.
        """
        name = LOCAL_DENSE if hasattr(self.inner, LOCAL_DENSE) else "search_dense"
        hits: list[Hit] = self._forward(
            name, namespace, vector, where, limit=limit, **asked_vectors(vectors)
        )
        return hits

    def stored_model(self) -> tuple[str, int] | None:
        """The inner backend's recorded embedding model (see :func:`stored_model`)."""
        if not hasattr(self.inner, STORED_MODEL):
            return None
        model: tuple[str, int] | None = self._forward(STORED_MODEL)
        return model

    def combined_writes(self) -> bool:
        """Whether the store below combines concurrent writes (:data:`COMBINED_WRITES`)."""
        if not hasattr(self.inner, COMBINED_WRITES):
            return False
        found: bool = self._forward(COMBINED_WRITES)
        return found

    def live(self, namespace: str, ids: Sequence[str]) -> list[str]:
        """Of ``ids`` a read served, those the store still holds (in order).

        Asks a read cache below whose reads may lag (see :data:`LIVE`); with
        none, every id is live and nothing is read.
        """
        if not hasattr(self.inner, LIVE):
            return list(ids)
        found: list[str] = self._forward(LIVE, namespace, ids)
        return found

    def write_stamps(self, namespace: str) -> dict[str, int] | None:
        """Other writers' counters for ``namespace``, if the store keeps them (:data:`STAMPS`)."""
        if not hasattr(self.inner, STAMPS):
            return None
        found: dict[str, int] | None = self._forward(STAMPS, namespace)
        return found

    def holds_cold(self, namespace: str) -> bool:
        """Whether ``namespace`` may hold cold memories (:data:`HOLDS_COLD`)."""
        if not hasattr(self.inner, HOLDS_COLD):
            return True
        found: bool = self._forward(HOLDS_COLD, namespace)
        return found

    def refresh(self, namespace: str) -> None:
        """Tell a read cache below that a recall of ``namespace`` starts (:data:`REFRESH`)."""
        if hasattr(self.inner, REFRESH):
            self._forward(REFRESH, namespace)

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
