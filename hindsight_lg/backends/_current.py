"""How a server's read cache stays current: write stamps, ages, the recall's check.

The part of :class:`~hindsight_lg.backends.cached.CachedBackend` that decides
whether a cached namespace still holds what the store holds (see its module
notes, "Staleness"). An exact cache (``ttl_s=None``, a Milvus Lite file) is
always current and none of this reads the store. Against a server, a cached
namespace is trusted for ``check_s`` after one small read of its write stamps
found it current, reloaded when another writer's stamp moved, after
``max_age_s`` at the latest, or after ``ttl_s`` where the store keeps no
stamps. A recall starts its check on a worker thread (:meth:`refresh`) while
it embeds its query, and its first cached read waits for it.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from hindsight_lg.backends._by_ids import done
from hindsight_lg.backends._index import NamespaceIndex
from hindsight_lg.backends.base import check_namespace
from hindsight_lg.backends.optional import WriteStamps

if TYPE_CHECKING:
    from hindsight_lg.backends.base import MemoryBackend

#: What :meth:`KeptCurrent._checked` returns when a namespace must be
#: (re)loaded or was never stamped.
UNKNOWN = object()
# Recalls whose stamps check runs beside their embedding and dense search at
# once; more concurrent recalls check on their own thread, as before.
_PREPARERS = 8


class KeptCurrent:
    """The part of :class:`~hindsight_lg.backends.cached.CachedBackend` that
    keeps a server's cached namespaces current (see the module notes)."""

    inner: MemoryBackend
    ttl_s: float | None
    check_s: float
    max_age_s: float
    _lock: threading.RLock
    _spaces: Any  # OrderedDict[str, NamespaceIndex | None]
    _recall: threading.local
    _preparers: ThreadPoolExecutor | None
    _preparing: int
    _space: Callable[[str], NamespaceIndex | None]
    _loaded: Callable[[str], NamespaceIndex | None]
    invalidate: Callable[[str], None]
    _note_check: Callable[[str, Future[None]], None]

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

        One small read when a check is due (``ask``: now); :data:`UNKNOWN`
        when the namespace is not cached, keeps no stamps, is past its
        ``max_age_s``, or another writer wrote it (then it is dropped, so
        the next read reloads it).
        """
        with self._lock:
            space = self._spaces.get(namespace)
            if not isinstance(space, NamespaceIndex) or space.stamps is None:
                return UNKNOWN
            now = time.monotonic()
            if now - space.loaded_at >= self.max_age_s:
                return UNKNOWN
            if not ask and now - space.checked_at < self.check_s:
                self._spaces.move_to_end(namespace)
                return space
        stamps = self._stamps(namespace)  # a round trip: outside the lock
        with self._lock:
            if self._spaces.get(namespace) is not space:
                return UNKNOWN  # reloaded or dropped meanwhile
            if stamps != space.stamps:
                del self._spaces[namespace]
                return UNKNOWN
            space.checked_at = max(space.checked_at, now)
            self._spaces.move_to_end(namespace)
            return space

    def _stamps(self, namespace: str) -> dict[str, int] | None:
        if self.ttl_s is None or not isinstance(self.inner, WriteStamps):
            return None
        return self.inner.write_stamps(namespace)

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
        if self._checked(namespace, ask=True) is UNKNOWN:
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
