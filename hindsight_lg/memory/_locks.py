"""The engine's write locks: captures lock their namespace, lifecycle locks all.

A capture of one tenant must not wait for another tenant's (a large turn
takes seconds), so captures hold a per-namespace lock and share the engine.
Lifecycle operations (update, consolidate, forget, ...) are rare and read
several records before writing; they hold the engine exclusively, as a plain
re-entrant lock, so no capture runs beside them.

Algorithm: a readers-writer lock whose "readers" are captures. A waiting
exclusive holder blocks new captures (no starvation), except captures of a
thread that already holds the lock (no self-deadlock). Both modes are
re-entrant, and a thread holding the exclusive mode may capture.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

# The store's exclusive section of a namespace that a forget and a capture's
# supersede share: on a server, another process's supersede would otherwise
# write back (as history) a memory forgotten between its read and its write.
# Here, not beside the supersede, so a forget loads no capture pipeline.
FORGET_LEASE = "forget"


class WriteLocks:
    """Per-namespace capture locks under one engine-wide exclusive lock.

    Example:
        >>> locks = WriteLocks()
        >>> with locks.namespace("u1"):
        ...     pass
        >>> with locks:  # exclusive, like a threading.RLock
        ...     pass
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._shared = 0
        self._waiting = 0
        self._mine = threading.local()
        self._namespaces: dict[str, threading.RLock] = {}

    def __enter__(self) -> WriteLocks:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return self
            self._waiting += 1
            mine = getattr(self._mine, "shared", 0)
            self._cond.wait_for(lambda: self._owner is None and self._shared == mine)
            self._waiting -= 1
            self._owner, self._depth = me, 1
        return self

    def __exit__(self, *exc: object) -> None:
        with self._cond:
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._cond.notify_all()

    @contextmanager
    def namespace(self, namespace: str) -> Iterator[None]:
        """Hold ``namespace`` for a capture (other namespaces go on)."""
        me = threading.get_ident()
        mine = getattr(self._mine, "shared", 0)
        with self._cond:
            if self._owner != me:
                self._cond.wait_for(
                    lambda: self._owner is None and (mine > 0 or not self._waiting)
                )
            self._shared += 1
            lock = self._namespaces.setdefault(namespace, threading.RLock())
        self._mine.shared = mine + 1
        try:
            with lock:
                yield
        finally:
            self._mine.shared = mine
            with self._cond:
                self._shared -= 1
                self._cond.notify_all()
