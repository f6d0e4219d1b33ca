"""A read cache's own dense search, with the vectors fetched when first needed.

The part of :class:`~hindsight_lg.backends.cached.CachedBackend` that serves
the write path's near-duplicate and conflict check, which runs once per
captured event, from the cached vectors (:class:`~.optional.LocalDense`). A
server's cache loads tenants without vectors, since its dense search goes to
the server; the first local search of such a tenant fetches them once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

from hindsight_lg.backends._index import NamespaceIndex
from hindsight_lg.backends.base import Hit, MemoryBackend, Where, asked_vectors


class LocalVectors:
    """The part of :class:`~hindsight_lg.backends.cached.CachedBackend` that
    searches the cached vectors (see the module notes)."""

    inner: MemoryBackend
    max_records: int
    _lock: threading.RLock
    _spaces: OrderedDict[str, NamespaceIndex | None]
    _space: Callable[..., NamespaceIndex | None]
    _too_big: Callable[[NamespaceIndex], bool]
    _evict: Callable[[], None]

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
