"""Tenants loaded into the read cache ahead of the captures that need them.

Every captured event is checked against its tenant's current memories (the
near-duplicate and conflict search), served from the read cache. A tenant the
cache does not hold, or has not checked within its window, is loaded or
checked first: on a Milvus server that is up to three round trips one after
another (the write stamps, the records, the edges), and a capture used to
wait for them only once it reached its first search, after encoding and
embedding the turn. :class:`TenantPrefetch` starts that load when the
capture starts, on a small pool of threads, so it overlaps the capture's own
encoding and model call; and the worker hands it the tenants of the captures
queued behind the one it writes, so their loads run side by side instead of
one per capture.

Nothing here decides what a capture reads: a prefetch is an ordinary read
that warms the cache (one nearest-neighbour search of the tenant in the read
cache, which loads it and, on a server, fetches its vectors as the capture's
own search would), and the capture's search finds the tenant loaded, or
waits for the load in flight, or loads it itself.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from hindsight_lg.backends import LocalDense
from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.telemetry import get_logger

#: Tenant loads run side by side at most.
THREADS = 8
#: Tenants waiting for a thread at most; beyond it, a capture loads its own.
MAX_WAITING = 256


class TenantPrefetch:
    """Warms the read cache for tenants about to be captured.

    Args:
        view: returns the store view to read through (the read cache, not a
            view that writes staged captures first).
        dim: the vectors' dimension (a search warms the cache's vectors).
    """

    def __init__(self, view: Callable[[], MemoryBackend], dim: int) -> None:
        self._view = view
        self._probe = [1.0] + [0.0] * (dim - 1)
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._waiting: set[str] = set()
        self._closed = False

    def warm(self, namespaces: Iterable[str]) -> None:
        """Start loading each namespace not already on its way; returns at once."""
        with self._lock:
            todo = [ns for ns in dict.fromkeys(namespaces) if ns not in self._waiting]
            todo = todo[: max(0, MAX_WAITING - len(self._waiting))]
            if not todo or self._closed:
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    THREADS, thread_name_prefix="hindsight-prefetch"
                )
            self._waiting.update(todo)
            pool = self._pool
        for i, namespace in enumerate(todo):
            try:
                pool.submit(self._load, namespace)
            except RuntimeError:  # the interpreter is exiting: nothing to warm
                with self._lock:
                    self._waiting.difference_update(todo[i:])
                return

    def _load(self, namespace: str) -> None:
        try:
            view = self._view()
            if not isinstance(view, LocalDense):  # no cached vectors: warm the rest
                view.count(namespace, Where(statuses=()))
            else:  # loads the tenant and the vectors the capture's search needs
                view.search_dense_local(
                    namespace, self._probe, Where(statuses=()), limit=1
                )
        except Exception as exc:  # the capture reads (and raises) on its own
            get_logger().debug("tenant_prefetch_failed", error=repr(exc)[:200])
        finally:
            with self._lock:
                self._waiting.discard(namespace)

    def close(self) -> None:
        """Drop the queued loads and wait for those in flight.

        The store closes after this: a load still running would reopen it
        (a Milvus Lite file then stays held by its server).
        """
        with self._lock:
            pool, self._pool = self._pool, None
            self._closed = True
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
