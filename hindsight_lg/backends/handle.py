"""One owner per store: a handle holds everything a process keeps once per store.

Engines on one store must share state: two read caches over one Milvus Lite
file would each serve reads the other's writes never reach (a
compare-and-swap retry loop livelocks on it), two spools or two write locks
would let captures cross. A :class:`StoreHandle` is that one place per store:

- the **backend**, and whether the handle opened (so closes) it;
- its **read cache** (:class:`~hindsight_lg.backends.cached.CachedBackend`),
  made on first use;
- the **parts** the engine hangs on the store (its write locks, a spool and
  its group commit per spool file), each made once under its key.

Which handle a backend has: :func:`store_handle` for a backend object (one per
object, held weakly, so a backend nobody uses is freed with its handle);
:func:`open_handle` for a location (one per Milvus Lite file and prefix in this
process; a server URI or ``:memory:`` gets a handle of its own each time, as
another process could write it anyway). That lookup is the process's only
registry of stores.

Life: an engine :meth:`~StoreHandle.retain` s the handle it works on and
:meth:`~StoreHandle.release` s it when it closes. The last release closes the
parts (newest first) and forgets them, so the next engine replays its spool;
a handle that opened its backend then closes the cache and the backend too.

Example:
    >>> from hindsight_lg.backends import InMemoryBackend
    >>> backend = InMemoryBackend()
    >>> store_handle(backend) is store_handle(backend)
    True
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.backends.cached import CachedBackend
from hindsight_lg.backends.optional import is_lite

T = TypeVar("T")


class StoreHandle:
    """The backend, read cache and engine parts of one store (see module notes).

    Args:
        backend: the store itself (not a wrapper).
        owns_backend: the last :meth:`release` closes the backend.
        location: the key :func:`open_handle` filed it under, if any.
    """

    def __init__(
        self,
        backend: MemoryBackend,
        *,
        owns_backend: bool = False,
        location: tuple[str, ...] | None = None,
    ) -> None:
        # The registry files a handle under its backend weakly, so a handle
        # that does not own its backend holds it weakly too: a strong
        # reference from the value would keep the key alive forever.
        self._backend: MemoryBackend | None = backend if owns_backend else None
        self._ref = weakref.ref(backend)
        self.owns_backend = owns_backend
        self.location = location
        self._lock = threading.RLock()
        self._cache: CachedBackend | None = None
        self._parts: dict[Hashable, Any] = {}
        self._users = 0

    @property
    def backend(self) -> MemoryBackend:
        """The store itself (alive while anyone holds it or its handle's engine)."""
        backend = self._ref()
        if backend is None:  # only reachable through a handle kept past its backend
            raise ReferenceError("the backend of this store handle was freed")
        return backend

    @property
    def cache(self) -> CachedBackend | None:
        """The read cache, once :meth:`read_cache` made it."""
        return self._cache

    def read_cache(self, *, max_bytes: int | None = None) -> MemoryBackend:
        """The backend behind its read cache, made on first use.

        The in-memory backend is its own cache. Milvus Lite is single-process,
        so its cache never expires and serves dense search; a server's
        expires after 10 s and leaves dense search to the server.

        Args:
            max_bytes: bound on the cache's estimated memory; replaces the
                bound of a cache made earlier.
        """
        from hindsight_lg.backends.memory import InMemoryBackend

        if isinstance(self.backend, (CachedBackend, InMemoryBackend)):
            return self.backend
        with self._lock:
            if self._cache is None:
                lite = is_lite(self.backend)
                self._cache = CachedBackend(self.backend, ttl_s=None if lite else 10.0)
            if max_bytes is not None:
                self._cache.bound(max_bytes)
            return self._cache

    def part(self, key: Hashable, make: Callable[[], T]) -> tuple[T, bool]:
        """The part under ``key`` (made on first use); ``True`` if just made.

        A part with a ``close()`` method is closed by the last :meth:`release`.
        """
        with self._lock:
            if key in self._parts:
                found: T = self._parts[key]
                return found, False
            made = self._parts[key] = make()
            return made, True

    def retain(self) -> StoreHandle:
        """Count one more user (an engine); returns the handle."""
        with self._lock:
            self._users += 1
        return self

    def release(self) -> bool:
        """Count one user fewer; the last closes the parts (and an owned backend).

        Returns:
            ``True`` when this was the last user.
        """
        with self._lock:
            self._users = max(0, self._users - 1)
            if self._users:
                return False
            parts, self._parts = list(self._parts.values()), {}
        try:
            for part in reversed(parts):  # a group commit before its spool
                close = getattr(part, "close", None)
                if callable(close):
                    close()
        finally:
            if self.owns_backend:
                _STORES.forget(self)
                (self._cache or self.backend).close()
        return True


class _Stores:
    """The handles of this process: by backend object, and by Lite file."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_backend: weakref.WeakKeyDictionary[object, StoreHandle] = (
            weakref.WeakKeyDictionary()
        )
        self._by_location: dict[tuple[str, ...], StoreHandle] = {}

    def of(self, backend: MemoryBackend) -> StoreHandle:
        with self._lock:
            found = self._by_backend.get(backend)
            if found is None:
                found = self._by_backend[backend] = StoreHandle(backend)
            return found

    def own(self, backend: MemoryBackend) -> StoreHandle:
        handle = StoreHandle(backend, owns_backend=True)
        with self._lock:
            self._by_backend[backend] = handle
        return handle.retain()

    def at(
        self, location: tuple[str, ...], opener: Callable[[], MemoryBackend]
    ) -> StoreHandle:
        # Opened under the lock: two engines opening one file at once must
        # not each start a backend on it.
        with self._lock:
            found = self._by_location.get(location)
            if found is None:
                backend = opener()
                found = StoreHandle(backend, owns_backend=True, location=location)
                self._by_location[location] = self._by_backend[backend] = found
            return found.retain()

    def forget(self, handle: StoreHandle) -> None:
        with self._lock:
            if handle.location is not None:
                if self._by_location.get(handle.location) is handle:
                    del self._by_location[handle.location]
            self._by_backend.pop(handle.backend, None)


_STORES = _Stores()


def store_handle(backend: MemoryBackend) -> StoreHandle:
    """The one handle of ``backend`` in this process (made on first use).

    A read cache is its own store: its handle is that of the backend it caches.
    """
    if isinstance(backend, CachedBackend):
        return _STORES.of(backend.inner)
    return _STORES.of(backend)


def open_handle(
    uri: str,
    opener: Callable[[], MemoryBackend],
    *,
    prefix: str = "hindsight",
) -> StoreHandle:
    """The handle of the store at ``uri``, retained for the caller.

    A Milvus Lite file (a path) has one handle per file and prefix in this
    process, so every engine on it shares one backend and read cache; its
    backend is opened by ``opener`` on first use. A server URI or
    ``:memory:`` gets a handle of its own, owning a fresh backend.

    Args:
        uri: ``":memory:"``, a file path, or ``http(s)://host:19530``.
        opener: opens the backend (called at most once per new handle).
        prefix: the collection prefix; part of a Lite file's key.
    """
    if uri == ":memory:" or "://" in uri:
        return _STORES.own(opener())
    location = ("lite", os.path.realpath(os.fspath(uri)), prefix)
    return _STORES.at(location, opener)


def read_cache_of(backend: MemoryBackend) -> MemoryBackend | None:
    """The read cache already wrapping ``backend`` in this process, if any.

    A reader that skips the cache (one-shot work) still writes through it
    when another engine caches the same backend, so that engine's reads stay
    fresh.
    """
    if isinstance(backend, CachedBackend):
        return backend
    return store_handle(backend).cache


def with_read_cache(
    backend: MemoryBackend, *, max_bytes: int | None = None
) -> MemoryBackend:
    """``backend`` behind its :class:`CachedBackend`, unless caching gains nothing.

    One cache per backend object (its :class:`~hindsight_lg.backends.handle.StoreHandle`
    holds it), so engines sharing a backend see each other's writes. The
    in-memory backend is its own cache. Milvus Lite is single-process, so its
    cache never expires and serves dense search; a server's expires after
    10 s and leaves dense search to the server. Writes made on the raw
    backend directly bypass the cache: call :meth:`CachedBackend.invalidate`
    after them.

    Args:
        backend: the store to cache.
        max_bytes: bound on the cache's estimated memory (default 1 GiB); given
            for a backend already cached, it replaces that cache's bound.

    Example:
        >>> from hindsight_lg.backends.memory import InMemoryBackend
        >>> backend = InMemoryBackend()
        >>> with_read_cache(backend) is backend  # its own cache
        True
    """
    if isinstance(backend, CachedBackend):
        return backend
    return store_handle(backend).read_cache(max_bytes=max_bytes)
