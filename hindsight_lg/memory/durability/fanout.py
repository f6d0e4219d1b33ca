"""Tenants of a commit round written at once, where the store combines writes.

The group commit writes a round tenant by tenant: records, then edges, then
the audit trail of each, and the captures' markers after. One after another
that is three or four store calls per tenant; against a Milvus server, whose
client combines writes sent at once into one call per collection
(``backends.milvus._combine``), the tenants are written from a small pool of
threads instead, so a round over a hundred tenants costs a handful of calls.
Each tenant's own writes stay in order inside its job. Stores that do not
combine writes (Milvus Lite, which serves one call at a time; the in-memory
backend) are written one tenant after another, as before.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor

#: Tenants of a round written at once where the store combines their writes.
WRITERS = 32


class Fanout:
    """Runs one job per tenant, at once when ``combined()`` says the store combines.

    Args:
        combined: whether the store combines concurrent writes (asked each
            round: a wrapper learns it from the store below).
    """

    def __init__(self, combined: Callable[[], bool]) -> None:
        self._combined = combined
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def each(self, job: Callable[[str], None], namespaces: Iterable[str]) -> None:
        """``job(namespace)`` for each namespace; returns when all are done.

        ``job`` records its own failure; an exception it lets out is raised
        here once every job finished.
        """
        todo = list(namespaces)
        pool = self._threads() if len(todo) > 1 else None
        if pool is None:
            for namespace in todo:
                job(namespace)
            return
        futures: list[Future[None]] = []
        for i, namespace in enumerate(todo):
            try:
                futures.append(pool.submit(job, namespace))
            except RuntimeError:  # the interpreter is exiting: its pools are gone
                for rest in todo[i:]:
                    job(rest)
                break
        errors = [f.exception() for f in futures]
        for error in errors:
            if error is not None:
                raise error

    def _threads(self) -> ThreadPoolExecutor | None:
        if not self._combined():
            return None
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    WRITERS, thread_name_prefix="hindsight-commit-write"
                )
            return self._pool

    def stop(self) -> None:
        """Let the threads go (a round in flight finishes; a later one makes new)."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)
