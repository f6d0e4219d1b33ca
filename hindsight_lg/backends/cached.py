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

import contextvars
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

from hindsight_lg.backends._by_ids import SearchByIds, done
from hindsight_lg.backends._index import NamespaceIndex
from hindsight_lg.backends.base import (
    Hit,
    MemoryBackend,
    Where,
    asked_vectors,
    check_namespace,
)
from hindsight_lg.backends.forwarding import STAMPS, STAMPS_PRUNE_S, ForwardingBackend
from hindsight_lg.model import Edge, EdgeType, MemoryRecord

#: Default bound on the cache's estimated memory (bytes), see the module notes.
DEFAULT_MAX_BYTES = 1 << 30
# Deletes leave their slots behind; past this share a namespace is reloaded.
_MAX_SLACK = 0.5
# Loads of a namespace written to meanwhile, before its reads go to the store.
_LOAD_ATTEMPTS = 3
# What _checked returns when a namespace must be (re)loaded or was never stamped.
_UNKNOWN = object()
# Recalls whose stamps check runs beside their embedding and dense search at
# once; more concurrent recalls check on their own thread, as before.
_PREPARERS = 8


class CachedBackend(SearchByIds, ForwardingBackend):
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

    def _fresh(self, space: NamespaceIndex | None) -> bool:
        # An uncacheable (too large) namespace is remembered as None; it is
        # checked again after the TTL like any other.
        if self.ttl_s is None:
            return True
        if space is None:
            return False
        age = time.monotonic() - space.loaded_at
        return age < (self.ttl_s if space.stamps is None else self.max_age_s)

    def _checked(self, namespace: str, *, ask: bool = False) -> object:
        """The cached ``namespace`` if the write stamps say it is current.

        One small read when a check is due (``ask``: now); :data:`_UNKNOWN`
        when the namespace is not cached, keeps no stamps, is past its
        ``max_age_s``, or another writer wrote it (then it is dropped, so
        the next read reloads it).
        """
        with self._lock:
            space = self._spaces.get(namespace)
            if not isinstance(space, NamespaceIndex) or space.stamps is None:
                return _UNKNOWN
            now = time.monotonic()
            if now - space.loaded_at >= self.max_age_s:
                return _UNKNOWN
            if not ask and now - space.checked_at < self.check_s:
                self._spaces.move_to_end(namespace)
                return space
        stamps = self._stamps(namespace)  # a round trip: outside the lock
        with self._lock:
            if self._spaces.get(namespace) is not space:
                return _UNKNOWN  # reloaded or dropped meanwhile
            if stamps != space.stamps:
                del self._spaces[namespace]
                return _UNKNOWN
            space.checked_at = max(space.checked_at, now)
            self._spaces.move_to_end(namespace)
            return space

    def _stamps(self, namespace: str) -> dict[str, int] | None:
        read = getattr(self.inner, STAMPS, None)
        if self.ttl_s is None or read is None:
            return None
        found: dict[str, int] | None = read(namespace)
        return found

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

    def refresh(self, namespace: str) -> None:
        """A recall of ``namespace`` starts on this thread: check it is current now.

        Where the store keeps write stamps, one small read, and a reload if
        another writer wrote the namespace (or it is not cached). It runs on
        a worker thread while the recall embeds its query and searches the
        server's dense index; the recall's first cached read waits for it.
        The recall's later reads are then served from the cache, and its
        :meth:`live` check needs no round trip. Nothing to do for an exact
        cache.
        """
        if self.ttl_s is None:
            return
        namespace = check_namespace(namespace)
        self._recall.started = (namespace, time.monotonic())
        with self._lock:
            pool = self._pool() if self._preparing < _PREPARERS else None
            if pool is not None:
                self._preparing += 1
        if pool is None:  # every worker busy: check here
            self._prepare(namespace)
            self._note_check(namespace, done())
            return
        run = contextvars.copy_context().run  # spans and logs keep the recall's
        job = pool.submit(run, self._prepare_beside, namespace)
        self._recall.pending = (namespace, job)
        self._note_check(namespace, job)  # for the recall's dense search

    def _pool(self) -> ThreadPoolExecutor:
        if self._preparers is None:
            self._preparers = ThreadPoolExecutor(
                _PREPARERS, thread_name_prefix="hindsight-cache"
            )
        return self._preparers

    def _prepare(self, namespace: str) -> None:
        """Check ``namespace`` against its stamps now; load it if it must be."""
        if self._checked(namespace, ask=True) is _UNKNOWN:
            self._space(namespace)

    def _prepare_beside(self, namespace: str) -> None:
        try:
            self._prepare(namespace)
        finally:
            with self._lock:
                self._preparing -= 1

    def _await(self, namespace: str) -> None:
        """Wait for this thread's recall's check of ``namespace`` (refresh)."""
        pending: tuple[str, Future[None]] | None = getattr(
            self._recall, "pending", None
        )
        if pending is None or pending[0] != namespace:
            return
        del self._recall.pending
        try:
            pending[1].result()
        except Exception:  # the caller's own read below retries, and raises
            return

    def live(self, namespace: str, ids: Sequence[str]) -> list[str]:
        """Of ``ids`` this cache served, those the store still holds (in order).

        Exact caches (``ttl_s=None``) see every write, so nothing is read.
        Against a server, another process may have deleted a memory this
        cache still holds. Where the store keeps write stamps, a namespace
        checked since this thread's recall began (:meth:`refresh`), or found
        current by one small read of the stamps now, holds what the store
        holds: the ids it holds are live, others are not. Otherwise one read
        by primary key tells, and a namespace found behind is dropped so its
        next read reloads it.
        """
        if self.ttl_s is None or not ids:
            return list(ids)
        self._await(namespace)
        space = self._loaded(namespace)
        if space is not None and space.stamps is not None:
            began = self._recall.__dict__.pop("started", None)
            current = (
                began is not None
                and began[0] == namespace
                and space.checked_at >= began[1]  # checked or loaded in this recall
            ) or self._checked(namespace, ask=True) is space
            if current:  # it holds what the store holds
                with self._lock:
                    return [i for i in ids if i in space.records]
        held = {r.id for r in self.inner.get(namespace, ids)}
        if len(held) < len(set(ids)):
            self.invalidate(namespace)
        return [i for i in ids if i in held]

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
            return [
                space.records[i].replace()
                for i in dict.fromkeys(ids)
                if i in space.records
            ]

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

    def search_dense_local(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Exact cosine search over the cached vectors, without a store round trip.

        Used by the write path's near-duplicate and conflict check, which runs
        once per captured event; falls back to the store for uncached namespaces.
        ``vectors=True`` gives each hit its kept (unit-length) row or the store's.
        """
        space = self._space(namespace, vectors=True)
        if space is not None and (space.filling or not space.keep_vectors):
            space = self._vectors(namespace, space)
        if space is None:
            return self.inner.search_dense(
                namespace, vector, where, limit=limit, **asked_vectors(vectors)
            )
        with self._lock:
            found = space.nearest(vector, where, limit)
            if vectors:  # records are cached without theirs: the kept unit rows
                return [Hit(r.replace(dense=space.vector(r.id)), s) for r, s in found]
        return [Hit(r.replace(), score) for r, score in found]

    def _vectors(self, namespace: str, space: NamespaceIndex) -> NamespaceIndex | None:
        """``space`` with its vectors fetched, or None while that cannot be yet.

        A server's cache loads tenants without vectors (dense search goes to
        the server): a recall-only tenant costs a third less memory and its
        load a third less time. The write path's near-duplicate check, which
        runs per captured event, then fetches them once; where its search (or
        the capture's prefetch) is what loads the tenant, that load reads them
        at once, in the same query. Writes during the
        fetch keep their own vectors (``keep_vectors`` is set first); until
        it ends, searches go to the store.
        """
        with self._lock:
            if space.filling:
                return None
            if space.keep_vectors:
                return space
            space.keep_vectors = space.filling = True
        try:
            rows = self.inner.query(
                namespace, Where(statuses=()), limit=self.max_records + 1, vectors=True
            )
        except Exception:
            with self._lock:
                space.keep_vectors = space.filling = False
            return None  # the store's own search answers, or raises
        with self._lock:
            space.fill_vectors(rows)
            space.filling = False
            if self._spaces.get(namespace) is not space:
                return space  # reloaded meanwhile: this search may still use it
            if self._too_big(space):
                self._spaces[namespace] = None
            self._evict()
        return space

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
