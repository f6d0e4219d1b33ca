"""One owner per Milvus Lite file in this process: its server and its ledger lock.

pymilvus starts a Milvus Lite server in this process for a ``.db`` path and
keeps it, with the file's lock, until the process exits: closing the client
does not stop it. A process that closed its memory would then still lock
other processes (the CLI, the panel, a second worker) out of the file. So
the backends of this process count their opens of each file on its
:class:`LiteFile`; when the last one closes, the server stops and the lock
goes with it. The same object holds the lock of the file's row ledger (see
``_integrity``), so two backends on one file never interleave a count and a
record with a delete.

A server this process had already started by other means (a ``MilvusClient``
of the application's own) is not ours to stop and is left running.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

_LOCK = threading.Lock()


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


class LiteFile:
    """What this process keeps once per Milvus Lite file (see module notes).

    Args:
        path: the file's absolute path (:func:`lite_path`).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.ledger_lock = threading.Lock()
        self._opens: int | None = None  # None: no server of ours runs on it

    def opened(self, *, started: bool) -> None:
        """Count one more backend; ``started``: its open started the server."""
        with _LOCK:
            if started:  # a fresh server: counts of one stopped meanwhile are stale
                self._opens = 1
            elif self._opens is not None:
                self._opens += 1

    def closed(self) -> None:
        """Count one backend fewer; the last one stops the server we started."""
        with _LOCK:
            if self._opens is None:
                return
            self._opens -= 1
            if self._opens > 0:
                return
            self._opens = None
        from milvus_lite.server_manager import server_manager_instance

        server_manager_instance.release_server(self.path)


# Kept for the process's life (a few bytes per file): a backend still open on
# a file must share the ledger lock of any backend opened on it later.
_FILES: dict[str, LiteFile] = {}


def lite_file(uri: str) -> LiteFile:
    """The one :class:`LiteFile` of ``uri`` in this process."""
    path = lite_path(uri)
    with _LOCK:
        found = _FILES.get(path)
        if found is None:
            found = _FILES[path] = LiteFile(path)
        return found
