"""Milvus backend: Milvus Lite for a local file, a Milvus server for an http(s) URI.

Three collections share a prefix: ``<prefix>_memories`` (records with a dense
vector and, where the server has it, a BM25 sparse vector), ``<prefix>_edges``
and ``<prefix>_audit``; a fourth, ``<prefix>_meta``, remembers the embedding
model so a change of model is caught instead of mixing vector spaces.

Primary keys are derived from (namespace, id), so two tenants holding the same
memory id (after an import, say) can never overwrite each other.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

from hindsight_lg.backends.base import Capabilities
from hindsight_lg.backends.milvus._combine import WriteCombiner
from hindsight_lg.backends.milvus._core import (
    READ_LEVELS,
    SCHEMA_VERSION,
    lexical_tokens,
    private_store,
)
from hindsight_lg.backends.milvus._graph import GraphOps
from hindsight_lg.backends.milvus._integrity import RowLedger
from hindsight_lg.backends.milvus._lease import MilvusLeases
from hindsight_lg.backends.milvus._lite_server import lite_file
from hindsight_lg.backends.milvus._records import RecordOps
from hindsight_lg.backends.milvus._setup import SetupOps

__all__ = ["SCHEMA_VERSION", "MilvusBackend", "lexical_tokens"]


class MilvusBackend(SetupOps, RecordOps, GraphOps):
    """Memories in Milvus through ``pymilvus.MilvusClient``.

    Args:
        uri: a file path (Milvus Lite) or ``http(s)://host:port`` (server).
        token: server credentials (``user:password`` or an API key).
        prefix: collection name prefix, so several stores can share a server.
        timeout: seconds per server call.
        read_consistency: the consistency of a server's reads outside a lease
            (see below): ``"Session"`` (default), ``"Strong"``, ``"Bounded"``
            or ``"Eventually"``. Milvus Lite ignores it.

    Reads on a server: a ``Strong`` read waits for the server's next time
    tick (``proxy.timeTickInterval``, 200 ms by default) so that it sees every
    write acknowledged anywhere before it; a ``Session`` read sees this
    process's own writes at once and other processes' within about one tick,
    in a few milliseconds. So reads default to ``Session``, and the reads that
    must see other processes' writes are ``Strong`` whatever the setting:
    everything inside :meth:`exclusive` (compare-and-swap updates,
    consolidation) and lease tickets. :meth:`delete` returns once the server
    serves the deletion (one ``Strong`` read, up to one tick), so a memory
    forgotten on one replica is not recalled on another afterwards, by a
    search or by a read cache's check that what it serves still exists.

    The constructor stores its arguments and touches nothing; the client
    connects in :meth:`open` (which :meth:`from_uri` calls) or, for a backend
    built with the constructor, at its first call. ``setup()`` creates the
    collections.

    Example:
        >>> backend = MilvusBackend.from_uri("./hindsight.db")  # doctest: +SKIP
        >>> backend.setup(dim=384, model_id="all-MiniLM-L6-v2")  # doctest: +SKIP
    """

    def __init__(
        self,
        uri: str,
        *,
        token: str = "",
        prefix: str = "hindsight",
        timeout: float | None = 30.0,
        read_consistency: str = "Session",
    ) -> None:
        if not prefix.replace("_", "").isalnum():
            raise ValueError("prefix must be letters, digits and underscores")
        if read_consistency not in READ_LEVELS:
            raise ValueError(
                f"read_consistency must be one of {', '.join(READ_LEVELS)}, "
                f"not {read_consistency!r}"
            )
        self.read_consistency = read_consistency
        self._strong = threading.local()
        self.uri = uri
        self.is_lite = not uri.startswith(("http://", "https://", "tcp://", "grpc://"))
        self.prefix = prefix
        # After `hindsight-lg reembed`, a pointer row in <prefix>_meta names the
        # prefix of the re-embedded collections; setup() follows it.
        self.active_prefix = prefix
        self.timeout = timeout
        self.capabilities = Capabilities(
            name="milvus-lite" if self.is_lite else "milvus", remote=not self.is_lite
        )
        # Lite only: a server keeps its own data safe; a Lite file that lost
        # rows is caught by the ledger (see _integrity).
        self._file = lite_file(uri) if self.is_lite else None
        self._rows = (
            None if self._file is None else RowLedger(uri, self._file.ledger_lock)
        )
        self._counted = False  # the ledger is written only once setup() checked it
        self._credentials = token
        self._conn = None
        self._lock = threading.RLock()
        self._dirty = False
        self._infix_like = True  # until the server refuses `like "%x%"`
        self._leases: MilvusLeases | None = None
        self._combiner = WriteCombiner()
        self._stamps = None

    @classmethod
    def from_uri(
        cls,
        uri: str,
        *,
        token: str = "",
        prefix: str = "hindsight",
        timeout: float | None = 30.0,
        read_consistency: str = "Session",
    ) -> MilvusBackend:
        """Open the store at ``uri`` now: connect, or start Milvus Lite for a file.

        Args:
            uri: a file path (Milvus Lite) or ``http(s)://host:port`` (server).
            token: server credentials (``user:password`` or an API key).
            prefix: collection name prefix, so several stores can share a server.
            timeout: seconds per server call.
            read_consistency: a server's reads outside a lease (see the class).

        Raises:
            StoreLocked: another process holds the Milvus Lite file.
            StoreUnavailable: the server is unreachable, or the file is damaged.
        """
        return cls(
            uri,
            token=token,
            prefix=prefix,
            timeout=timeout,
            read_consistency=read_consistency,
        ).open()

    def exclusive(self, namespace: str, resource: str) -> AbstractContextManager[None]:
        """Keep other processes out of ``resource`` of ``namespace`` for a ``with`` block.

        Milvus Lite is single-process, so the engine's own lock is the whole
        guarantee there; on a server, a lease (:mod:`._lease`) is held.
        """
        if self.is_lite:
            return nullcontext()
        if self._leases is None:
            self._leases = MilvusLeases(self)
        return self._held(self._leases, namespace, resource)

    @contextmanager
    def _held(
        self, leases: MilvusLeases, namespace: str, resource: str
    ) -> Iterator[None]:
        # Under a lease, reads must see the last holder's writes: Strong.
        with leases.hold(namespace, resource), self.strong_reads():
            yield

    def close(self) -> None:
        """Flush and release the client; the last backend on a Lite file frees its lock.

        Other processes can open the file once every backend of this process
        on it is closed (see ``_lite_server``).
        """
        if self._conn is None:
            return  # never connected: nothing to flush or release
        try:
            self._close_stamps()
            if self._dirty:
                self.flush()
            self._record_rows()
        finally:
            try:
                self._conn.close()
            finally:
                self._conn = None
                if self._file is not None:
                    self._file.closed()
                    private_store(self.uri)  # the files Milvus Lite made since
