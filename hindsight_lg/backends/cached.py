"""A write-through namespace cache in front of a backend, so a recall costs no query.

A recall runs several paths (dense, lexical, entity, recency, time, graph).
Against Milvus each is a round trip, and Milvus Lite serves them one at a
time. Every path reads one namespace's records, vectors and edges, which are
small (a user's memories) and change only through writes. So the first read
of a namespace loads them once; later reads are served in-process, and writes
through this wrapper update the cache as they reach the store.

Dense search: an exact cosine scan of one namespace's vectors in numpy (about
4 ms for 10,000 vectors of 384 dimensions) costs far less than Milvus Lite's
filtered search, which scans every row of the collection. It is served from
the cache where the cache is exact (``ttl_s=None``: a Milvus Lite file, whose
lock keeps other processes out) and from the store otherwise.

Staleness: against a server, other processes write too. Where the store
keeps write stamps (a Milvus server: one counter per writer and namespace,
see ``backends.milvus._stamps``), a cached namespace is checked against them
with one small read at the start of every recall (:meth:`CachedBackend.refresh`)
and at most every ``check_s`` (1 s) for other reads, and reloaded when another
writer's counter moved, or at the latest after ``max_age_s`` (10 min). A store
without stamps has its namespaces reloaded after ``ttl_s`` (10 s). Dense
search, which must see other processes' writes at once, goes to the server.

Memory: a cached record costs its vector (``4 * dim`` bytes; a server's
cache holds vectors only for namespaces the write path searched, fetched
then), about
:data:`~hindsight_lg.backends._index.RECORD_BYTES` for the record, postings
and indexes, and twice its text. ``max_bytes`` (default 1 GiB, about 250,000
memories at 384 dimensions) bounds the estimate over all cached namespaces:
the least recently used are evicted beyond it, and a namespace larger than
it on its own (or than ``max_records``) is not cached at all; its reads,
dense search included, go to the store.

Example:
    >>> from hindsight_lg.backends.memory import InMemoryBackend
    >>> backend = CachedBackend(InMemoryBackend())
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from hindsight_lg.backends._by_ids import SearchByIds
from hindsight_lg.backends._current import KeptCurrent
from hindsight_lg.backends._index import NamespaceIndex
from hindsight_lg.backends._local_dense import LocalVectors
from hindsight_lg.backends.base import (
    Hit,
    MemoryBackend,
    Where,
    asked_vectors,
    check_namespace,
)
from hindsight_lg.backends.forwarding import ForwardingBackend
from hindsight_lg.backends.optional import STAMPS_PRUNE_S
from hindsight_lg.model import Edge, EdgeType, MemoryRecord

#: Default bound on the cache's estimated memory (bytes), see the module notes.
DEFAULT_MAX_BYTES = 1 << 30
# Deletes leave their slots behind; past this share a namespace is reloaded.
_MAX_SLACK = 0.5
# Loads of a namespace written to meanwhile, before its reads go to the store.
_LOAD_ATTEMPTS = 3


class CachedBackend(KeptCurrent, LocalVectors, SearchByIds, ForwardingBackend):
    """Serves reads from a per-namespace cache; see the module notes.

    Args:
        inner: the real backend; every write reaches it before the cache.
        ttl_s: seconds before a cached namespace is reloaded (``None``: never,
            right for single-process stores such as Milvus Lite).
        max_records: namespaces larger than this are not cached (reads go to
            ``inner``); least recently used namespaces are evicted beyond
            ``max_cached``.
        max_cached: how many namespaces to keep.
        max_total_records: evict least recently used namespaces beyond this
            many cached records in all.
        max_bytes: evict least recently used namespaces beyond this estimated
            memory in all; a namespace above it alone is not cached.
        dense: serve dense search from the cached vectors. ``None`` (default):
            when the cache is exact, that is when ``ttl_s`` is ``None``.
        check_s: where the store keeps write stamps, seconds a namespace found
            current is served before reads other than a recall's ask again.
        max_age_s: where the store keeps write stamps, seconds before a
            namespace is reloaded however current its stamps say it is (a
            process that stopped between a write and its stamp).

    Example:
        >>> from hindsight_lg.backends.memory import InMemoryBackend
        >>> cache = CachedBackend(InMemoryBackend(), max_bytes=256 * 2**20)
    """

    def __init__(
        self,
        inner: MemoryBackend,
        *,
        ttl_s: float | None = None,
        max_records: int = 50_000,
        max_cached: int = 10_000,
        max_total_records: int = 1_000_000,
        max_bytes: int = DEFAULT_MAX_BYTES,
        dense: bool | None = None,
        check_s: float = 1.0,
        max_age_s: float = 600.0,
    ) -> None:
        super().__init__(inner)
        if max_age_s >= STAMPS_PRUNE_S:
            # A stamp row pruned while this cache trusts it could hide a write.
            raise ValueError(
                f"max_age_s must be under {STAMPS_PRUNE_S:.0f} s (stamp rows older "
                "than that are pruned)"
            )
        self.ttl_s = ttl_s
        self.check_s = check_s
        self.max_age_s = max_age_s
        # The namespace and start of the recall running on this thread, and
        # its stamps check running beside it (refresh).
        self._recall = threading.local()
        self._preparers: ThreadPoolExecutor | None = None
        self._preparing = 0
        self.max_records = max_records
        self.max_cached = max_cached
        self.max_total_records = max_total_records
        self.max_bytes = max_bytes
        self.dense = ttl_s is None if dense is None else dense
        self._spaces: OrderedDict[str, NamespaceIndex | None] = OrderedDict()
        self._lock = threading.RLock()
        # Loads run outside the lock (a namespace of 10,000 takes seconds on
        # Milvus Lite, and every other tenant's reads need the lock): one load
        # per namespace at a time, and a write that lands during a load makes
        # its snapshot suspect, so the load is redone. Writes are counted only
        # for namespaces loading now, so the count never outgrows the loads.
        self._loading: dict[str, threading.Event] = {}
        self._writes: dict[str, int] = {}

    def _space(self, namespace: str, vectors: bool = False) -> NamespaceIndex | None:
        # vectors: a load this call starts fetches the vectors too, whatever
        # self.dense says (the write path's search needs them: one query, not two).
        check_namespace(namespace)
        self._await(namespace)
        held = self._checked(namespace)
        if isinstance(held, NamespaceIndex):
            return held
        for _ in range(_LOAD_ATTEMPTS):
            with self._lock:
                if namespace in self._spaces and self._fresh(self._spaces[namespace]):
                    self._spaces.move_to_end(namespace)
                    return self._spaces[namespace]
                running = self._loading.get(namespace)
                if running is None:
                    done = self._loading[namespace] = threading.Event()
                    self._writes[namespace] = 0
            if running is not None:  # another thread loads it: wait, look again
                running.wait()
                continue
            space: NamespaceIndex | None = None
            loaded = False
            try:
                space = self._load(namespace, vectors)  # None: too large to cache
                loaded = True
            finally:
                with self._lock:
                    del self._loading[namespace]
                    clean = self._writes.pop(namespace) == 0 and loaded
                    if clean:  # installed before waiters wake, so they find it
                        self._spaces[namespace] = space
                        self._evict()
                done.set()
            if clean:
                return space
        return None  # written to throughout: read the store this time

    def _wrote(self, namespace: str) -> None:
        """Note a write (the caller holds the lock): a load running now redoes."""
        if namespace in self._writes:
            self._writes[namespace] += 1

    def _evict(self) -> None:
        # Least recently used first; the newest namespace always stays.
        while len(self._spaces) > 1 and (
            len(self._spaces) > self.max_cached
            or self._rows() > self.max_total_records
            or self.nbytes() > self.max_bytes
        ):
            self._spaces.popitem(last=False)

    def _rows(self) -> int:
        return sum(len(s.records) for s in self._spaces.values() if s is not None)

    def held(self) -> int:
        """How many namespaces the cache holds now."""
        with self._lock:
            return sum(1 for s in self._spaces.values() if s is not None)

    def nbytes(self) -> int:
        """Estimated memory the cached namespaces hold (see the module notes)."""
        with self._lock:
            return sum(s.nbytes() for s in self._spaces.values() if s is not None)

    def _too_big(self, space: NamespaceIndex) -> bool:
        return len(space.records) > self.max_records or space.nbytes() > self.max_bytes

    def _load(self, namespace: str, vectors: bool = False) -> NamespaceIndex | None:
        # Stamps first: a write landing before the rows are read costs one
        # reload later, never a cache that misses it (see _stamps module).
        started = time.monotonic()
        stamps = self._stamps(namespace)
        # Vectors only where the cache serves dense search or the write path
        # asked; otherwise a server's cache fetches them later (_vectors).
        keep = self.dense or vectors
        rows = self.inner.query(
            namespace,
            Where(statuses=()),
            limit=self.max_records + 1,
            vectors=keep,
        )
        if len(rows) > self.max_records:
            return None
        space = NamespaceIndex(
            loaded_at=started,
            keep_vectors=keep,
            stamps=stamps,
            checked_at=started,
        )
        for r in rows:
            space.put(r)
        if self._too_big(space):
            return None
        for e in self.inner.all_edges(namespace):
            space.link(e)
        return space

    def _loaded(self, namespace: str) -> NamespaceIndex | None:
        with self._lock:
            space = self._spaces.get(namespace)
            return space if isinstance(space, NamespaceIndex) else None

    def bound(self, max_bytes: int) -> None:
        """Bound the estimated memory at ``max_bytes``, evicting at once."""
        with self._lock:
            self.max_bytes = max_bytes
            self._evict()

    def invalidate(self, namespace: str | None = None) -> None:
        """Forget cached state (one namespace, or all)."""
        with self._lock:
            if namespace is None:
                self._spaces.clear()
                for loading in self._loading:
                    self._wrote(loading)
            else:
                self._spaces.pop(namespace, None)
                self._wrote(namespace)

    # -- writes: store first, then cache -----------------------------------

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        self.inner.upsert(namespace, records)
        with self._lock:
            self._wrote(namespace)
            if space := self._loaded(namespace):
                for r in records:
                    space.put(r)
                if self._too_big(space):
                    # Grown past the bound: from now on its reads go to the store.
                    self._spaces[namespace] = None
                self._evict()

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        n = self.inner.delete(namespace, ids)
        with self._lock:
            self._wrote(namespace)
            space = self._loaded(namespace)
            if space is not None:
                for i in ids:
                    space.drop(i)
            if space is None or space.slack() > _MAX_SLACK:
                # Reload on the next read: a namespace too large to cache may
                # fit now, and a reload reclaims the deleted records' slots.
                self._spaces.pop(namespace, None)
        return n

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        self.inner.add_edges(namespace, edges)
        with self._lock:
            self._wrote(namespace)
            if space := self._loaded(namespace):
                for e in edges:
                    space.link(e)

    def delete_edges(self, namespace: str, ids: Sequence[str]) -> int:
        n = self.inner.delete_edges(namespace, ids)
        with self._lock:
            self._wrote(namespace)
            if space := self._loaded(namespace):
                for i in ids:
                    space.unlink(i)
        return n

    # -- reads -------------------------------------------------------------

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        space = None if vectors else self._space(namespace)
        if space is None:
            return self.inner.get(namespace, ids, vectors=vectors)
        with self._lock:
            found = [
                space.records[i].replace()
                for i in dict.fromkeys(ids)
                if i in space.records
            ]
        if self.ttl_s is not None and len(found) < len(set(ids)):
            # Another process may have written it since the load (a capture
            # on another replica a moment ago): a memory that exists is
            # never reported missing, at one store read per miss.
            held = {r.id for r in found}
            found += self.inner.get(
                namespace, [i for i in dict.fromkeys(ids) if i not in held]
            )
        return found

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        space = None if vectors else self._space(namespace)
        if space is None:
            return self.inner.query(namespace, where, limit=limit, vectors=vectors)
        with self._lock:
            rows = space.newest(where, limit)
        return [r.replace() for r in rows]

    def search_dense(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Exact cosine search over the cached vectors where the cache is exact.

        Otherwise (a server's expiring cache, an uncached namespace) the store
        searches; during a recall's check it sends ids only (:mod:`._by_ids`).
        """
        if not self.dense:
            if (
                not vectors
                and (hits := self._search_by_ids(namespace, vector, where, limit))
                is not None
            ):
                return hits
            return self.inner.search_dense(
                namespace, vector, where, limit=limit, **asked_vectors(vectors)
            )
        return self.search_dense_local(
            namespace, vector, where, limit=limit, **asked_vectors(vectors)
        )

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        space = self._space(namespace)
        if space is None:
            return self.inner.search_lexical(namespace, terms, where, limit=limit)
        with self._lock:
            hits = space.lexical(terms, where, limit)
        return [Hit(r.replace(), s) for r, s in hits]

    def edges(
        self, namespace: str, ids: Sequence[str], *, types: Sequence[EdgeType] = ()
    ) -> list[Edge]:
        space = self._space(namespace)
        if space is None:
            return self.inner.edges(namespace, ids, types=types)
        with self._lock:
            found = {e.key: e for i in ids for e in space.adjacency.get(i, {}).values()}
        return [e for e in found.values() if not types or e.type in types]

    def count(self, namespace: str, where: Where) -> int:
        space = self._space(namespace)
        if space is None:
            return self.inner.count(namespace, where)
        with self._lock:
            return sum(1 for r in space.records.values() if where.matches(r))

    # Everything else (the audit trail, namespaces, flush, exclusive) goes
    # to the store unchanged: see ForwardingBackend.

    def close(self) -> None:
        if self._preparers is not None:
            self._preparers.shutdown(wait=True, cancel_futures=True)
            self._preparers = None
        self.invalidate()
        self.inner.close()
