"""Milvus Lite's in-process server: one per file, stopped when its last backend closes.

pymilvus starts a Milvus Lite server in this process for a ``.db`` path and
keeps it, with the file's lock, until the process exits: closing the client
does not stop it. A process that closed its memory would then still lock
other processes (the CLI, the panel, a second worker) out of the file. The
backends of this process count their opens of each file; when the last one
closes, the server stops and the lock goes with it.

A server this process had already started by other means (a ``MilvusClient``
of the application's own) is not ours to stop and is left running.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_LOCK = threading.Lock()
_OPEN: dict[str, int] = {}  # path -> backends of ours open on the server we started


def lite_path(uri: str) -> str:
    """The key Milvus Lite's server manager files a ``.db`` path under."""
    return os.path.abspath(Path(uri).expanduser())


def served_here(uri: str) -> bool:
    """True when this process already runs a Milvus Lite server for ``uri``."""
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:
        return False
    return lite_path(uri) in server_manager_instance._servers


def opened(uri: str, *, started: bool) -> None:
    """Count one more backend on ``uri``; ``started``: its open started the server."""
    path = lite_path(uri)
    with _LOCK:
        if started:  # a fresh server: counts of one stopped meanwhile are stale
            _OPEN[path] = 1
        elif path in _OPEN:
            _OPEN[path] += 1


def closed(uri: str) -> None:
    """Count one backend fewer on ``uri``; the last one stops the server we started."""
    path = lite_path(uri)
    with _LOCK:
        left = _OPEN.get(path)
        if left is None:
            return
        if left > 1:
            _OPEN[path] = left - 1
            return
        del _OPEN[path]
    from milvus_lite.server_manager import server_manager_instance

    server_manager_instance.release_server(path)
