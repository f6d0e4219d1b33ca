"""What every part of the Milvus backend shares: the client, its calls, its names.

:class:`MilvusCore` holds the connection and the state the other parts read
(collection names, the Lite row ledger, the dirty flag); ``_setup``,
``_records`` and ``_graph`` add the operations on top, and
:class:`~hindsight_lg.backends.milvus.backend.MilvusBackend` joins them.
Errors from pymilvus are translated into the store's error tree here, once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, Self

from hindsight_lg._files import make_dirs, narrow_tree
from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends.base import Capabilities
from hindsight_lg.backends.milvus._combine import WriteCombiner
from hindsight_lg.backends.milvus._integrity import (
    RowLedger,
    check_manifests,
    deleted_rows,
)
from hindsight_lg.backends.milvus._lease import MilvusLeases
from hindsight_lg.backends.milvus._lite_server import LiteFile, served_here
from hindsight_lg.backends.milvus._stamps import Stamper
from hindsight_lg.errors import (
    StoreError,
    StoreLocked,
    StoreTimeout,
    StoreUnavailable,
)
from hindsight_lg.telemetry import get_logger

SCHEMA_VERSION = 1
#: Consistency levels a server's reads may use (see ``MilvusBackend``).
READ_LEVELS = ("Session", "Strong", "Bounded", "Eventually")
# The client calls that read, by name: on a server each gets a consistency level.
_READS = frozenset({"query", "query_iterator", "get", "search"})
QUERY_WINDOW = 16384  # Milvus caps offset+limit of one query at this
STUB_VECTOR = [0.0, 0.0]  # edges/audit/meta need a vector field to exist
SCALARS = (
    "namespace",
    "agent_id",
    "scope",
    "tier",
    "kind",
    "status",
    "thread_id",
    "event_time",
    "created_at",
    "importance",
    "strength",
)
RECORD_FIELDS = ["id", "doc", *SCALARS]
POINTER = "active_prefix"  # meta row naming the collections in use


def pk(namespace: str, key: str) -> str:
    return hashlib.sha1(f"{namespace}\x1f{key}".encode()).hexdigest()


def token(term: str) -> str:
    """A term as an ASCII token Milvus's standard analyzer keeps whole.

    Chinese bigrams would otherwise be split back into single characters.
    """
    return term if term.isascii() and term.isalnum() else "x" + term.encode().hex()


def lexical_tokens(text: str) -> str:
    """The lexical terms of ``text`` as analyzer-safe tokens, space-separated."""
    return " ".join(token(t) for t in lexical_terms(text))


_LOCKED = (
    "{action}: another process holds this Milvus Lite file. Milvus Lite is "
    "single-process: for several processes use a Milvus server "
    "(from_uri('http://host:19530')) or run `milvus-lite server`."
)


# Milvus Lite serves gRPC from threads of this very process, with the server
# default of at most one idle keepalive ping per 5 minutes; pymilvus pings
# every 10 s, backing off while idle. After a minute or more of idling the
# server answers "too_many_pings", grpc logs two error lines to stderr and the
# next call pays a reconnect. A peer in the same process cannot vanish
# unnoticed, so Lite gets no pings.
_LITE_CHANNEL = {
    "grpc.keepalive_time_ms": 2**31 - 1,
    "grpc.keepalive_permit_without_calls": False,
}


def private_store(uri: str) -> None:
    """Take group and other bits off a Milvus Lite store's folder and files.

    Its folder is 0700 from the start (so nothing beneath is reachable by
    others), but Milvus Lite creates its files 0644 and folders 0755, and a
    store an earlier version made is 0755 itself: narrowing them at open and
    close keeps the files private even if the folder is moved or opened up.
    A file that cannot be narrowed is logged, never fatal.
    """
    failed = narrow_tree(Path(uri).expanduser().resolve())
    if failed:
        get_logger().warning("lite_store_modes_not_narrowed", uri=uri, paths=failed)


def _make_store_folder(uri: str) -> None:
    """Create a Milvus Lite store's folder (and missing parents) 0700.

    Raises:
        StoreUnavailable: it cannot be created (a file in the way, no rights).
    """
    try:
        make_dirs(Path(uri).expanduser().resolve())
    except OSError as exc:
        raise StoreUnavailable(
            f"opening Milvus Lite at {uri}: its folder cannot be created "
            f"({exc.strerror or exc}): pass a path to a folder you can write "
            "(Milvus Lite keeps a store as a folder)"
        ) from exc


def _lite_locked(uri: str) -> bool:
    """True when another process holds the Milvus Lite data directory's lock."""
    lock = Path(uri).expanduser() / "LOCK"
    if not lock.is_file() or served_here(uri):
        return False
    try:
        import fcntl
    except ImportError:  # Windows: no flock; the generic error is raised instead
        return False
    with lock.open("rb") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(fh, fcntl.LOCK_UN)
    return False


_PARSE = "cannot parse expression"


def _translate(exc: Exception, action: str) -> StoreError:
    text = str(exc)
    if _PARSE in text:
        # The expression carries the caller's words ("lock", "timeout", long
        # lists of terms): only the server's reason, at the end, says what
        # went wrong, and it must survive the cut to 300 characters.
        reason = text.rsplit("error:", 1)[-1].strip(" )>")
        return StoreError(f"{action}: {_PARSE}: {reason[:300]}")
    if "lock" in text.lower() or "DataDirLocked" in repr(
        exc.__cause__ or exc.__context__
    ):
        return StoreLocked(_LOCKED.format(action=action))
    if "timeout" in text.lower() or "deadline" in text.lower():
        return StoreTimeout(f"{action}: Milvus did not answer in time ({text[:200]})")
    if "connect" in text.lower() or "unavailable" in text.lower():
        return StoreUnavailable(f"{action}: Milvus is unreachable ({text[:200]})")
    return StoreError(f"{action}: {text[:300]}")


# Filters every part uses. Milvus needs some filter to scan a whole
# collection; `pk != ""` matches every row.
ALL_ROWS = 'pk != ""'
EVERYTHING = 10**7  # a limit no store reaches: "all matching rows, paged"


class MilvusCore:
    """The client and the state shared by the backend's parts (see module doc)."""

    uri: str
    is_lite: bool
    # Partitions a server collection hashes tenants into (see _schema._tenancy);
    # 0 keeps the plain scalar filter.
    tenant_partitions: int = 64
    prefix: str
    active_prefix: str
    timeout: float | None
    capabilities: Capabilities
    _file: LiteFile | None
    _rows: RowLedger | None
    _counted: bool
    _credentials: str
    _conn: Any  # the MilvusClient, once open() connected
    _lock: threading.RLock
    _dirty: bool
    _infix_like: bool
    _leases: MilvusLeases | None
    _combiner: WriteCombiner  # a server's concurrent writes share calls
    _stamps: Stamper | None  # a server's write stamps, made at the first write
    read_consistency: str
    _strong: threading.local  # .depth > 0: this thread reads Strong

    @property
    def memories(self) -> str:
        return f"{self.active_prefix}_memories"

    def _name(self, kind: str) -> str:
        return f"{self.active_prefix}_{kind}"

    @property
    def _client(self) -> Any:
        """The client, connected on first use (see :meth:`open`)."""
        conn = self._conn
        return conn if conn is not None else self.open()._conn

    def open(self) -> Self:
        """Connect now (starting Milvus Lite for a file); idempotent.

        :meth:`~hindsight_lg.backends.milvus.MilvusBackend.from_uri` calls it,
        so a store that cannot be opened fails there; a backend built with
        the constructor connects at its first call instead.

        Raises:
            StoreLocked: another process holds the Milvus Lite file.
            StoreUnavailable: the server is unreachable, or the Lite file's
                manifests are damaged.
        """
        with self._lock:
            if self._conn is None:
                self._conn = self._connect(self.uri, self._credentials)
        return self

    def _connect(self, uri: str, token: str) -> Any:
        from pymilvus import MilvusClient

        started = False
        if self.is_lite:
            # The store's folder is 0700 before Milvus Lite writes into it
            # (it would make it 0755, its files 0644): nobody else can reach
            # the files beneath, whatever mode Milvus Lite gives them.
            _make_store_folder(uri)
            started = not served_here(uri)
            if started:  # else this process's server has read it already
                check_manifests(uri)
                if self._rows is not None:  # nothing of ours writes it yet
                    self._rows.remove_leftovers()
        options = {"grpc_options": _LITE_CHANNEL} if self.is_lite else {}
        try:
            client = MilvusClient(uri=uri, token=token, timeout=self.timeout, **options)
        except Exception as exc:
            # Milvus Lite logs the lock error and raises a generic "Open local
            # milvus failed", so ask the lock file itself.
            if self.is_lite and _lite_locked(uri):
                raise StoreLocked(_LOCKED.format(action=f"opening {uri}")) from exc
            raise _translate(exc, f"opening Milvus at {uri}") from exc
        if self._file is not None:
            self._file.opened(started=started)
            private_store(uri)
        return client

    def _call(self, action: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.is_lite:
            kwargs.setdefault("timeout", self.timeout)
            if getattr(fn, "__name__", "") in _READS and self._data(args):
                kwargs.setdefault("consistency_level", self._read_level())
        # Milvus Lite serves one call at a time; a server's client is
        # thread-safe, and serialising its calls would queue every tenant's
        # recall behind one round trip.
        lock = self._lock if self.is_lite else nullcontext()
        try:
            with lock, self._shrinking(fn, args, kwargs):
                result = fn(*args, **kwargs)
            if not self.is_lite and fn == self._client.delete and self._data(args):
                self._served(args[0])
            return result
        except (StoreError, ValueError, TypeError):
            raise
        except Exception as exc:
            raise _translate(exc, action) from exc

    def _write_rows(self, action: str, method: str, name: str, rows: list[Any]) -> None:
        """``client.<method>(name, rows)``; on a server, combined with concurrent ones.

        See :mod:`._combine`: a server answers one call of many rows in about
        the time of one row. Milvus Lite serves one call at a time anyway.
        """
        if not rows:
            return

        def send(batch: list[Any]) -> object:
            return self._call(action, getattr(self._client, method), name, batch)

        if self.is_lite:
            send(rows)
        else:
            self._combiner.write((method, name), rows, send)

    def combined_writes(self) -> bool:
        """Whether writes sent at once share server calls (a server: yes).

        The group commit then writes a round's tenants at once rather than
        one after another.
        """
        return not self.is_lite

    def _data(self, args: tuple[Any, ...]) -> bool:
        # Memories, edges and audit; <prefix>_meta (lease tickets, the model,
        # the pointer) keeps its Strong default and needs no confirmation.
        data = (self.memories, self._name("edges"), self._name("audit"))
        return bool(args) and args[0] in data

    @contextmanager
    def strong_reads(self) -> Iterator[None]:
        """Make this thread's reads in the ``with`` block ``Strong`` on a server.

        Each read then sees every write acknowledged, by any process, before
        it started (and waits up to one server time tick for it).
        """
        depth = getattr(self._strong, "depth", 0)
        self._strong.depth = depth + 1
        try:
            yield
        finally:
            self._strong.depth = depth

    def _served(self, name: str) -> None:
        # Wait until the server serves a deletion: a Strong read waits for its
        # next time tick. Milvus 2.3 returns no timestamp for a delete, so a
        # Session read would not wait for it even in this process; after this,
        # every process's reads (a read cache's check that what it serves
        # still exists, a search) stop seeing the rows.
        with self.strong_reads():
            self._call(
                "confirming a deletion",
                self._client.query,
                name,
                filter=ALL_ROWS,
                output_fields=["pk"],
                limit=1,
            )

    def _wrote(self, namespace: str, *, wait: bool = False) -> None:
        """Stamp a write to ``namespace`` (a server's read caches elsewhere see it).

        ``wait`` (deletions): the stamp is stored before this returns.
        """
        if not self.is_lite:
            self._stamper().wrote(namespace, wait=wait)

    def _stamper(self) -> Stamper:
        with self._lock:
            if self._stamps is None:
                self._stamps = Stamper(
                    lambda: self._name("meta"),
                    self._call,
                    lambda: self._client,
                    self._read_level,
                )
            return self._stamps

    def write_stamps(self, namespace: str) -> dict[str, int] | None:
        """Other writers' write counters for ``namespace``; ``None`` on Milvus Lite.

        A read cache compares them with what it saw when it loaded the
        namespace: equal, it holds what the store holds (see ``_stamps``).
        Milvus Lite has one process, so its caches see every write.
        """
        if self.is_lite:
            return None
        return self._stamper().read(namespace)

    def _close_stamps(self) -> None:
        stamps, self._stamps = self._stamps, None
        if stamps is not None:
            stamps.close()

    def _read_level(self) -> str:
        return "Strong" if getattr(self._strong, "depth", 0) else self.read_consistency

    def _shrinking(
        self, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> AbstractContextManager[None]:
        # Every delete or drop lowers the ledger first, whoever calls it, so
        # the ledger never records more rows than a healthy store holds.
        if self._rows is None:
            return nullcontext()
        if fn == self._client.delete:
            return self._rows.shrinking(args[0], deleted_rows(args, kwargs))
        if fn == self._client.drop_collection:
            return self._rows.shrinking(args[0], None)
        return nullcontext()

    def _iter_rows(
        self, name: str, expr: str, fields: list[str], limit: int
    ) -> Iterator[dict[str, Any]]:
        self._flush_if_dirty()
        # One plain query answers whenever the matches fit its window (a
        # tenant's memories, almost always); an iterator costs a round trip
        # to set up and one per batch, so it only pages past the window
        # (reading the first window again).
        rows = self._call(
            "querying",
            self._client.query,
            name,
            filter=expr,
            output_fields=fields,
            limit=min(limit, QUERY_WINDOW),
        )
        if limit <= QUERY_WINDOW or len(rows) < QUERY_WINDOW:
            yield from rows
            return
        it = self._call(
            "querying",
            self._client.query_iterator,
            name,
            filter=expr,
            output_fields=fields,
            batch_size=1000,
            limit=limit,
        )

        def next_batch(**_: Any) -> Any:
            # QueryIterator.next takes no timeout, which _call adds on servers.
            return it.next()

        try:
            while batch := self._call("querying", next_batch):
                yield from batch
        finally:
            it.close()

    def _flush_if_dirty(self) -> None:
        # Milvus Lite scans unflushed rows slowly, so flush before reading.
        # Servers make unflushed rows searchable themselves (Strong consistency).
        if self._dirty and self.is_lite:
            self.flush()

    def flush(self) -> None:
        """Make written rows durable and fast to search.

        Milvus Lite seals its growing segments (unsealed rows are searched by
        a slow scan). A server needs nothing: an acknowledged write is already
        in its log, and Strong reads see it; a client flush there would only
        force segment sealing, which is slow and rate-limited.
        """
        if not self.is_lite:
            self._dirty = False
            return
        with self._lock:
            for name in (self.memories, *(self._name(k) for k in ("edges", "audit"))):
                self._call("flushing", self._client.flush, name)
            self._dirty = False
