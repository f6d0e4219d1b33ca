"""One store per Milvus Lite file in a process: engines on one file share it.

Two engines that each opened a Lite file would each keep a read cache, and
each would serve reads from its own, never seeing the other's writes (a
compare-and-swap retry loop livelocks on it). So within a process, engines
opened on the same file share one backend (hence one read cache), one
capture spool, one group commit and one set of write locks. Each engine
holds a reference; the last one to close closes them.

Keys are resolved paths, so ``./a.db`` and ``/abs/a.db`` are one file.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from hindsight_lg.memory._locks import WriteLocks

T = TypeVar("T")

_LOCK = threading.Lock()
_OPEN: dict[tuple[str, ...], list[Any]] = {}
_LOCKS: weakref.WeakKeyDictionary[object, WriteLocks] = weakref.WeakKeyDictionary()


def file_key(kind: str, path: str | os.PathLike[str], *extra: str) -> tuple[str, ...]:
    """The registry key of a file: its kind, resolved path and anything else."""
    return (kind, os.path.realpath(os.fspath(path)), *extra)


def acquire(key: tuple[str, ...], make: Callable[[], T]) -> tuple[T, bool]:
    """The shared object under ``key`` (made on first use); ``True`` if just made."""
    with _LOCK:
        entry = _OPEN.get(key)
        fresh = entry is None
        if entry is None:
            entry = _OPEN[key] = [make(), 0]
        entry[1] += 1
        return entry[0], fresh


def release(key: tuple[str, ...]) -> bool:
    """Drop one reference; ``True`` when it was the last (the caller closes)."""
    with _LOCK:
        entry = _OPEN.get(key)
        if entry is None:
            return True
        entry[1] -= 1
        if entry[1] > 0:
            return False
        del _OPEN[key]
        return True


def write_locks(backend: object) -> WriteLocks:
    """The write locks of a backend object, shared by every engine using it."""
    with _LOCK:
        locks = _LOCKS.get(backend)
        if locks is None:
            locks = _LOCKS[backend] = WriteLocks()
        return locks
