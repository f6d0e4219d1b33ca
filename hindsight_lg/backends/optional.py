"""What a backend may do beyond the protocol: one small typed protocol per feature.

A :class:`~hindsight_lg.backends.base.MemoryBackend` needs only the methods of
that protocol. Some backends can do more, and the engine goes faster where
they do: a read cache searches the vectors it holds, a Milvus server counts
other processes' writes. Each such feature is declared here as a
``runtime_checkable`` protocol of one member, with what a backend *without* it
means; the engine asks ``isinstance(backend, HoldsCold)`` and mypy then knows
the method is there. No method is looked up by its name.

========================  ==========================  ===========================
protocol                  who has it                  a backend without it
========================  ==========================  ===========================
:class:`LocalDense`       read cache                  dense search asks the store
:class:`LiveCheck`        read cache                  never behind: all ids live
:class:`Refresh`          read cache                  nothing to do at a recall
:class:`HoldsCold`        read cache                  may hold cold memories
:class:`WriteStamps`      Milvus                      nobody else writes it
:class:`DenseIds`         Milvus                      dense search returns records
:class:`CombinedWrites`   Milvus                      writes go one after another
:class:`StoredModel`      Milvus, in-memory           adopts no model
:class:`LiteStore`        Milvus                      other processes may write it
========================  ==========================  ===========================

A wrapper (:class:`~hindsight_lg.backends.forwarding.ForwardingBackend`) has
each feature but :class:`DenseIds` and :class:`LiteStore`, and answers as a
backend without it would where the backend below lacks it: a wrapped backend
keeps what it can do.

``isinstance`` looks at the class first, then at the object for a member its
class lacks: a subclass turns off a feature its base has by setting the
method to ``None`` in its class body (not on an instance). A wrapper of your
own passes the features below it on by subclassing
:class:`~hindsight_lg.backends.forwarding.ForwardingBackend`: from Python 3.12
``isinstance`` looks members up statically, so a proxy that forwards through
``__getattr__`` hides them (the engine then acts as for a backend without).

Example:
    >>> from hindsight_lg.backends import CachedBackend, InMemoryBackend
    >>> isinstance(InMemoryBackend(), LiveCheck)
    False
    >>> isinstance(CachedBackend(InMemoryBackend()), LiveCheck)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from hindsight_lg.backends.base import Hit, MemoryBackend, Where, asked_vectors

#: Seconds after its last write that a writer's stamp rows may be deleted
#: (:class:`WriteStamps`): a read cache must reload every namespace more often.
STAMPS_PRUNE_S = 7 * 86400.0


@runtime_checkable
class LocalDense(Protocol):
    """An exact dense search of a read cache's own vectors, no store round trip.

    The write path's near-duplicate check runs it once per captured event.
    Without it, that check asks the store (``search_dense``).
    """

    def search_dense_local(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """``search_dense`` over the vectors held here (the store's if none are)."""
        ...


@runtime_checkable
class LiveCheck(Protocol):
    """Which ids a read cache served the store still holds.

    A cache in front of a server may lag other processes' deletions; recall
    drops what it ranked but the store no longer holds. Without it the
    backend is never behind: every id it served is live.
    """

    def live(self, namespace: str, ids: Sequence[str]) -> list[str]:
        """Of ``ids``, those the store still holds (in order)."""
        ...


@runtime_checkable
class Refresh(Protocol):
    """A recall of a namespace starts: a read cache that may lag checks it once.

    The recall's later reads and its :class:`LiveCheck` then need no round
    trip. Without it there is nothing to do.
    """

    def refresh(self, namespace: str) -> None:
        """Start checking that ``namespace`` is current (may return at once)."""
        ...


@runtime_checkable
class HoldsCold(Protocol):
    """Whether a namespace may hold cold memories.

    Recall skips its dense search of cold memories where the answer is no.
    Without it: maybe, so that search runs.
    """

    def holds_cold(self, namespace: str) -> bool:
        """False only when ``namespace`` surely holds no cold memory."""
        ...


@runtime_checkable
class WriteStamps(Protocol):
    """Counters of other processes' writes to a namespace, by writer.

    A server's read cache reloads a namespace when they move; a writer's
    rows may be deleted :data:`STAMPS_PRUNE_S` after its last write. Without
    it (or when it answers ``None``) nobody else writes the store, and a
    cache that may lag reloads on a timer.
    """

    def write_stamps(self, namespace: str) -> dict[str, int] | None:
        """Other writers' counters for ``namespace``; ``None``: not kept."""
        ...


@runtime_checkable
class DenseIds(Protocol):
    """A dense search that returns ids and cosines only, no records.

    A server's read cache that holds the namespace hands out the records
    itself (:mod:`hindsight_lg.backends._by_ids`). Without it, dense search
    returns the store's records.
    """

    def search_dense_ids(
        self, namespace: str, vector: Sequence[float], where: Where, *, limit: int
    ) -> list[tuple[str, float]]:
        """``(id, cosine)`` of the nearest records under the filter, best first."""
        ...


@runtime_checkable
class CombinedWrites(Protocol):
    """Whether writes sent at once share the store's calls (a Milvus server).

    The group commit then writes a round's tenants at once. Without it they
    are written one after another.
    """

    def combined_writes(self) -> bool:
        """True when concurrent writes share calls."""
        ...


@runtime_checkable
class StoredModel(Protocol):
    """Which embedding model made the store's vectors, asked before ``setup()``.

    An engine given no embedder adopts it. Without it, it adopts nothing and
    gets the default embedder.
    """

    def stored_model(self) -> tuple[str, int] | None:
        """``(model_id, dim)`` of the vectors held; ``None`` for a new store."""
        ...


@runtime_checkable
class LiteStore(Protocol):
    """Whether the store is a local file only this process opens (Milvus Lite).

    A read cache in front of such a store sees every write: it never expires
    and serves dense search itself. Without it, other processes may write the
    store, and its read cache expires and leaves dense search to the store.
    """

    is_lite: bool


def stored_model(backend: MemoryBackend) -> tuple[str, int] | None:
    """The (model id, dim) ``backend`` records for its vectors, if it says.

    ``None`` for a new store, or a backend without :class:`StoredModel`.
    """
    return backend.stored_model() if isinstance(backend, StoredModel) else None


def combines_writes(backend: MemoryBackend) -> bool:
    """Whether ``backend`` combines writes sent at once (:class:`CombinedWrites`)."""
    return isinstance(backend, CombinedWrites) and bool(backend.combined_writes())


def is_lite(backend: MemoryBackend) -> bool:
    """Whether ``backend`` is a file only this process opens (:class:`LiteStore`)."""
    return isinstance(backend, LiteStore) and bool(backend.is_lite)


def local_dense_search(
    backend: MemoryBackend,
    namespace: str,
    vector: Sequence[float],
    where: Where,
    *,
    limit: int,
    vectors: bool = False,
) -> list[Hit]:
    """Dense search of ``backend``'s read cache (:class:`LocalDense`), else the store's.

    ``vectors`` reaches the backend only when asked (see
    :func:`~hindsight_lg.backends.base.asked_vectors`).
    """
    search = (
        backend.search_dense_local
        if isinstance(backend, LocalDense)
        else backend.search_dense
    )
    return search(namespace, vector, where, limit=limit, **asked_vectors(vectors))


__all__ = [
    "STAMPS_PRUNE_S",
    "CombinedWrites",
    "DenseIds",
    "HoldsCold",
    "LiteStore",
    "LiveCheck",
    "LocalDense",
    "Refresh",
    "StoredModel",
    "WriteStamps",
    "combines_writes",
    "is_lite",
    "local_dense_search",
    "stored_model",
]
