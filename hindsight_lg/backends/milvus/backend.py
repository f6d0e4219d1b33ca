"""Milvus backend: Milvus Lite for a local file, a Milvus server for an http(s) URI.

Three collections share a prefix: ``<prefix>_memories`` (records with a dense
vector and, where the server has it, a BM25 sparse vector), ``<prefix>_edges``
and ``<prefix>_audit``; a fourth, ``<prefix>_meta``, remembers the embedding
model so a change of model is caught instead of mixing vector spaces.

Primary keys are derived from (namespace, id), so two tenants holding the same
memory id (after an import, say) can never overwrite each other.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends._index import record_text
from hindsight_lg.backends.base import Capabilities, Hit, Where, check_namespace
from hindsight_lg.backends.lexical import bm25_scores
from hindsight_lg.backends.milvus import _lite_server as lite_server
from hindsight_lg.backends.milvus._expr import lit, lits, where_expr
from hindsight_lg.backends.milvus._integrity import (
    RowLedger,
    check_manifests,
    deleted_rows,
)
from hindsight_lg.backends.milvus._lease import MilvusLeases
from hindsight_lg.backends.milvus._lite_repair import remove_index_sidecars, unreadable
from hindsight_lg.backends.milvus._lite_server import served_here
from hindsight_lg.errors import (
    EmbeddingMismatch,
    StoreError,
    StoreLocked,
    StoreTimeout,
    StoreUnavailable,
)
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord

SCHEMA_VERSION = 1
_QUERY_WINDOW = 16384  # Milvus caps offset+limit of one query at this
_STUB_VECTOR = [0.0, 0.0]  # edges/audit/meta need a vector field to exist
_SCALARS = (
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
_RECORD_FIELDS = ["id", "doc", *_SCALARS]
_POINTER = "active_prefix"  # meta row naming the collections in use


def _pk(namespace: str, key: str) -> str:
    return hashlib.sha1(f"{namespace}\x1f{key}".encode()).hexdigest()


def _token(term: str) -> str:
    """A term as an ASCII token Milvus's standard analyzer keeps whole.

    Chinese bigrams would otherwise be split back into single characters.
    """
    return term if term.isascii() and term.isalnum() else "x" + term.encode().hex()


def lexical_tokens(text: str) -> str:
    """The lexical terms of ``text`` as analyzer-safe tokens, space-separated."""
    return " ".join(_token(t) for t in lexical_terms(text))


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


def _translate(exc: Exception, action: str) -> StoreError:
    text = str(exc)
    if "lock" in text.lower() or "DataDirLocked" in repr(
        exc.__cause__ or exc.__context__
    ):
        return StoreLocked(_LOCKED.format(action=action))
    if "timeout" in text.lower() or "deadline" in text.lower():
        return StoreTimeout(f"{action}: Milvus did not answer in time ({text[:200]})")
    if "connect" in text.lower() or "unavailable" in text.lower():
        return StoreUnavailable(f"{action}: Milvus is unreachable ({text[:200]})")
    return StoreError(f"{action}: {text[:300]}")


class MilvusBackend:
    """Memories in Milvus through ``pymilvus.MilvusClient``.

    Args:
        uri: a file path (Milvus Lite) or ``http(s)://host:port`` (server).
        token: server credentials (``user:password`` or an API key).
        prefix: collection name prefix, so several stores can share a server.
        timeout: seconds per server call.

    Example:
        >>> backend = MilvusBackend("./hindsight.db")  # doctest: +SKIP
        >>> backend.setup(dim=384, model_id="all-MiniLM-L6-v2")  # doctest: +SKIP
    """

    def __init__(
        self,
        uri: str,
        *,
        token: str = "",
        prefix: str = "hindsight",
        timeout: float | None = 30.0,
    ) -> None:
        if not prefix.replace("_", "").isalnum():
            raise ValueError("prefix must be letters, digits and underscores")
        self.uri = uri
        self.is_lite = not uri.startswith(("http://", "https://", "tcp://", "grpc://"))
        self.prefix = prefix
        # After `hindsight-lg reembed`, a pointer row in <prefix>_meta names the
        # prefix of the re-embedded collections; setup() follows it.
        self.active_prefix = prefix
        self.timeout = timeout
        self.capabilities = Capabilities(
            name="milvus-lite" if self.is_lite else "milvus"
        )
        # Lite only: a server keeps its own data safe; a Lite file that lost
        # rows is caught by the ledger (see _integrity).
        self._rows = RowLedger(uri) if self.is_lite else None
        self._counted = False  # the ledger is written only once setup() checked it
        self._client = self._connect(uri, token)
        self._lock = threading.RLock()
        self._dirty = False
        self._infix_like = True  # until the server refuses `like "%x%"`
        self._leases: MilvusLeases | None = None

    @property
    def memories(self) -> str:
        return f"{self.active_prefix}_memories"

    def _name(self, kind: str) -> str:
        return f"{self.active_prefix}_{kind}"

    def _connect(self, uri: str, token: str) -> Any:
        from pymilvus import MilvusClient

        started = False
        if self.is_lite:
            Path(uri).expanduser().resolve().parent.mkdir(parents=True, exist_ok=True)
            started = not served_here(uri)
            if started:  # else this process's server has read it already
                check_manifests(uri)
        options = {"grpc_options": _LITE_CHANNEL} if self.is_lite else {}
        try:
            client = MilvusClient(uri=uri, token=token, timeout=self.timeout, **options)
        except Exception as exc:
            # Milvus Lite logs the lock error and raises a generic "Open local
            # milvus failed", so ask the lock file itself.
            if self.is_lite and _lite_locked(uri):
                raise StoreLocked(_LOCKED.format(action=f"opening {uri}")) from exc
            raise _translate(exc, f"opening Milvus at {uri}") from exc
        if self.is_lite:
            lite_server.opened(uri, started=started)
        return client

    def _call(self, action: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if not self.is_lite:
            kwargs.setdefault("timeout", self.timeout)
        try:
            with self._lock, self._shrinking(fn, args, kwargs):
                return fn(*args, **kwargs)
        except (StoreError, ValueError, TypeError):
            raise
        except Exception as exc:
            raise _translate(exc, action) from exc

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

    def _row_counts(
        self, names: Sequence[str] = (), *, exact: bool = False
    ) -> dict[str, int]:
        names = names or [
            self.memories,
            *(self._name(k) for k in ("edges", "audit", "meta")),
        ]
        counts = {}
        for name in names:
            rows = self._call(
                "counting rows",
                self._client.query,
                name,
                # No filter: Milvus Lite counts from segment metadata
                # (milliseconds), which upserts and deletes inflate until a
                # compaction; `pk != ""` scans every row and is exact.
                filter='pk != ""' if exact else "",
                output_fields=["count(*)"],
            )
            counts[name] = int(rows[0]["count(*)"]) if rows else 0
        return counts

    def _verify_rows(self, names: Sequence[str] = ()) -> dict[str, int]:
        """Raise if a collection holds fewer rows than the ledger's exact record.

        The fast count is an upper bound of the rows held, so it clears a
        collection in milliseconds; only a collection whose fast count is
        below the record is counted exactly before it is judged.

        Returns:
            The fast counts, so a caller about to record need not count again.
        """
        if self._rows is None:
            return {}
        recorded = self._rows.read()
        fast = self._row_counts(names)
        low = [n for n, c in fast.items() if c < recorded.get(n, 0)]
        if low:
            self._rows.verify(self._row_counts(low, exact=True))
        return fast

    def _check_rows(self) -> None:
        """Raise if a collection lost rows since the ledger's record; then record."""
        if self._rows is None:
            return
        with self._lock, self._rows.lock:
            fast = self._verify_rows()
            self._counted = True
        self._record_rows(fast)

    def _record_rows(self, fast: dict[str, int] | None = None) -> None:
        """Raise the ledger to exact counts of the collections that grew.

        The ledger holds exact counts only (a fast count inflated by upserts
        would later read as lost rows once compaction removed them). A
        collection is counted exactly when its fast count grew by a quarter
        since the record, so the scans cost in proportion to what was written.
        ``fast`` reuses counts just taken (at open) instead of counting again.
        """
        if self._rows is None or not self._counted:
            return
        try:
            with self._lock, self._rows.lock:
                recorded = self._rows.read()
                grown = [
                    name
                    for name, rows in (fast or self._row_counts()).items()
                    if rows > 1.25 * recorded.get(name, 0)
                ]
                if grown:
                    self._rows.record(self._row_counts(grown, exact=True))
        except (StoreError, OSError) as exc:
            # The ledger stays a lower bound without this update: only newer
            # rows go unguarded until the next open.
            telemetry.get_logger().warning(
                "lite_row_ledger_not_updated", error=str(exc)
            )

    # -- setup -------------------------------------------------------------

    def setup(self, *, dim: int, model_id: str) -> None:
        """Create the collections if missing; check the stored embedding model."""
        # One listing instead of a round trip per collection: opening a store
        # is most of what a command that embeds nothing spends.
        present = set(self._call("listing collections", self._client.list_collections))
        self.active_prefix = self.read_pointer(present)
        if self.memories not in present:
            self._create_memories(dim)
        for kind, builder in (
            ("edges", self._edges_schema),
            ("audit", self._audit_schema),
            ("meta", self._meta_schema),
        ):
            if self._name(kind) not in present:
                self._create_stub(self._name(kind), builder())
        for name in (
            self.memories,
            *(self._name(k) for k in ("edges", "audit", "meta")),
        ):
            self._load(name, verify=False)  # _check_rows verifies all four
        self._check_rows()
        self._check_model(dim, model_id)
        self.capabilities = Capabilities(
            bm25=self._has_bm25(), name=self.capabilities.name
        )

    def _load(self, name: str, *, verify: bool = True) -> None:
        """Load a collection; on Milvus Lite, repair a torn index file once.

        A SIGKILL while Milvus Lite writes an index sidecar leaves it truncated
        and every later load fails. Sidecars are rebuilt from the data files
        when missing, so they are removed and the load retried on the same
        server: the failed load left the collection released, not broken.
        """
        with self._lock:
            try:
                self._call("loading collection", self._client.load_collection, name)
            except StoreTimeout:
                raise  # slow, not broken: a retry would only be slower
            except StoreError as exc:
                # Not narrowed by class: a torn file's message can read as
                # "unavailable" (FAISS quotes errno: "Resource temporarily
                # unavailable"), and a needless repair costs one index build.
                if not self.is_lite or not remove_index_sidecars(self.uri, name, exc):
                    raise
                self._load_repaired(name)
            # Whoever loads it (setup, reembed's copy): a collection that lost
            # rows is never read as if it were whole.
            if verify and self._rows is not None:
                with self._rows.lock:
                    self._verify_rows([name])

    def _load_repaired(self, name: str) -> None:
        try:
            self._call("loading collection", self._client.load_collection, name)
        except StoreTimeout:
            raise
        except StoreError as exc:
            raise unreadable(self.uri, name, exc) from exc

    def _has(self, name: str) -> bool:
        return bool(
            self._call("listing collections", self._client.has_collection, name)
        )

    def _create_memories(self, dim: int) -> None:
        from pymilvus import DataType, Function, FunctionType

        schema = self._memories_schema(dim)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="lexical_bm25",
                function_type=FunctionType.BM25,
                input_field_names=["lexical"],
                output_field_names=["sparse"],
            )
        )
        index = self._client.prepare_index_params()
        index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
        index.add_index(
            "sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25"
        )
        try:
            self._create(self.memories, schema, index)
        except StoreError:
            # Servers before 2.5 have no sparse vectors or BM25: fall back to a
            # dense-only schema and the client-side lexical path. Milvus 2.3
            # creates the collection before refusing the sparse index: drop
            # that half-made collection first.
            if self._has(self.memories):
                self._call("dropping", self._client.drop_collection, self.memories)
            index = self._client.prepare_index_params()
            index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
            self._create(
                self.memories, self._memories_schema(dim, analyzer=False), index
            )

    def _memories_schema(self, dim: int, analyzer: bool = True) -> Any:
        from pymilvus import DataType

        s = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
        s.add_field("id", DataType.VARCHAR, max_length=64)
        s.add_field("namespace", DataType.VARCHAR, max_length=512)
        for name in ("agent_id", "thread_id"):
            s.add_field(name, DataType.VARCHAR, max_length=512)
        for name in ("scope", "tier", "kind", "status"):
            s.add_field(name, DataType.VARCHAR, max_length=32)
        for name in ("event_time", "created_at"):
            s.add_field(name, DataType.DOUBLE)
        for name in ("importance", "strength"):
            s.add_field(name, DataType.FLOAT)
        extra = {"enable_analyzer": True} if analyzer else {}
        s.add_field("lexical", DataType.VARCHAR, max_length=65535, **extra)
        s.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        s.add_field("doc", DataType.JSON)
        return s

    def _stub_schema(self, fields: list[tuple[str, int]]) -> Any:
        from pymilvus import DataType

        s = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
        for name, length in fields:
            s.add_field(name, DataType.VARCHAR, max_length=length)
        s.add_field("at", DataType.DOUBLE)
        s.add_field("doc", DataType.JSON)
        s.add_field("stub", DataType.FLOAT_VECTOR, dim=2)
        return s

    def _edges_schema(self) -> Any:
        return self._stub_schema(
            [("namespace", 512), ("src", 64), ("dst", 64), ("type", 32)]
        )

    def _audit_schema(self) -> Any:
        return self._stub_schema([("namespace", 512), ("memory_id", 64), ("op", 32)])

    def _meta_schema(self) -> Any:
        return self._stub_schema([("namespace", 512)])

    def _create_stub(self, name: str, schema: Any) -> None:
        index = self._client.prepare_index_params()
        index.add_index("stub", index_type="FLAT", metric_type="L2")
        self._create(name, schema, index)

    def _create(self, name: str, schema: Any, index: Any) -> None:
        self._call(
            f"creating collection {name}",
            self._client.create_collection,
            name,
            schema=schema,
            index_params=index,
            consistency_level="Strong",
        )

    def _has_bm25(self) -> bool:
        info = self._call(
            "describing collection", self._client.describe_collection, self.memories
        )
        return any(f.get("name") == "sparse" for f in info.get("fields", []))

    def _check_model(self, dim: int, model_id: str) -> None:
        rows = self._call(
            "reading meta",
            self._client.query,
            self._name("meta"),
            filter='pk == "embedding"',
            output_fields=["doc"],
        )
        if not rows:
            self._put_meta(
                "embedding",
                {"model_id": model_id, "dim": dim, "schema_version": SCHEMA_VERSION},
            )
            return
        stored = rows[0]["doc"]
        if (stored.get("model_id"), stored.get("dim")) != (model_id, dim):
            raise EmbeddingMismatch(
                f"collection {self.memories} holds vectors of {stored.get('model_id')} "
                f"(dim {stored.get('dim')}), but the embedder is {model_id} (dim {dim}). "
                "Use the same embedder, or run `hindsight-lg reembed` to re-embed into "
                "a new collection."
            )

    def read_pointer(self, present: set[str] | None = None) -> str:
        """The prefix ``<prefix>_meta`` points to (``prefix`` itself when none).

        ``present`` is the collections just listed, if the caller has them.
        """
        base = f"{self.prefix}_meta"
        exists = self._has(base) if present is None else base in present
        if not exists:
            return self.prefix
        self._load(base)
        rows = self._call(
            "reading meta",
            self._client.query,
            base,
            filter=f"pk == {lit(_POINTER)}",
            output_fields=["doc"],
        )
        return str(rows[0]["doc"]["prefix"]) if rows else self.prefix

    def switch_to(self, prefix: str) -> None:
        """Point ``<prefix>_meta`` at another prefix's collections.

        One single-row upsert, so a process opening the store sees either the
        old collections or the new ones, never a mix.
        """
        row = {"pk": _POINTER, "namespace": "", "at": 0.0, "doc": {"prefix": prefix}}
        row["stub"] = _STUB_VECTOR
        base = f"{self.prefix}_meta"
        self._call("switching collections", self._client.upsert, base, [row])
        self._call("flushing", self._client.flush, base)

    def _put_meta(self, key: str, doc: dict[str, Any]) -> None:
        row = {"pk": key, "namespace": "", "at": 0.0, "doc": doc, "stub": _STUB_VECTOR}
        self._call("writing meta", self._client.upsert, self._name("meta"), [row])

    # -- records -----------------------------------------------------------

    def _row(self, r: MemoryRecord) -> dict[str, Any]:
        doc = r.to_dict(vectors=False)
        row: dict[str, Any] = {k: doc[k] for k in _SCALARS}
        row["event_time"] = float(r.event_time)
        row["created_at"] = float(r.created_at)
        row.update(
            pk=_pk(r.namespace, r.id),
            id=r.id,
            doc=doc,
            dense=list(r.dense),
            lexical=lexical_tokens(record_text(r))[:60000],
        )
        return row

    @staticmethod
    def _record(row: dict[str, Any]) -> MemoryRecord:
        doc = row["doc"]
        if isinstance(doc, str):
            doc = json.loads(doc)
        record = MemoryRecord.from_dict(doc)
        dense = row.get("dense")
        if dense is not None:
            # pymilvus decodes a float vector as a list of floats: copy, not convert.
            record.dense = (
                list(dense) if type(dense) is list else [float(x) for x in dense]
            )
        return record

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        """Insert or replace records; flushed lazily before the next search."""
        check_namespace(namespace)
        if not records:
            return
        for r in records:
            if r.namespace != namespace:
                raise ValueError(f"record {r.id} belongs to {r.namespace!r}")
            if not r.dense:
                raise ValueError(f"record {r.id} has no dense vector")
        rows = [self._row(r) for r in records]
        self._call("writing memories", self._client.upsert, self.memories, rows)
        self._dirty = True

    def _fields(self, vectors: bool) -> list[str]:
        return [*_RECORD_FIELDS, "dense"] if vectors else _RECORD_FIELDS

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Records with these ids, any status."""
        check_namespace(namespace)
        if not ids:
            return []
        pks = [_pk(namespace, i) for i in dict.fromkeys(ids)]
        rows = self._call(
            "reading memories",
            self._client.get,
            self.memories,
            ids=pks,
            output_fields=self._fields(vectors),
        )
        return [self._record(row) for row in rows]

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Matching records, newest event first (paged past Milvus's query window)."""
        expr = where_expr(check_namespace(namespace), where)
        fields = self._fields(vectors)
        rows = list(self._iter_rows(self.memories, expr, fields, limit + 1))
        if len(rows) > limit:
            # Milvus queries have no ORDER BY: with more matches than the limit,
            # pick the newest ids from a light scan, then fetch those rows.
            light = self._iter_rows(self.memories, expr, ["pk", "event_time"], 10**7)
            newest = sorted(light, key=lambda r: -float(r["event_time"]))[:limit]
            rows = self._call(
                "reading memories",
                self._client.get,
                self.memories,
                ids=[r["pk"] for r in newest],
                output_fields=fields,
            )
        records = [self._record(row) for row in rows]
        records.sort(key=lambda r: (r.event_time, r.id), reverse=True)
        return records

    def _iter_rows(
        self, name: str, expr: str, fields: list[str], limit: int
    ) -> Iterator[dict[str, Any]]:
        self._flush_if_dirty()
        if limit <= _QUERY_WINDOW:
            yield from self._call(
                "querying",
                self._client.query,
                name,
                filter=expr,
                output_fields=fields,
                limit=limit,
            )
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

    def search_dense(
        self, namespace: str, vector: Sequence[float], where: Where, *, limit: int
    ) -> list[Hit]:
        """Cosine nearest neighbours under the filter."""
        expr = where_expr(check_namespace(namespace), where)
        self._flush_if_dirty()
        res = self._call(
            "searching memories",
            self._client.search,
            self.memories,
            data=[list(map(float, vector))],
            anns_field="dense",
            filter=expr,
            limit=limit,
            output_fields=_RECORD_FIELDS,
            search_params={"metric_type": "COSINE"},
        )
        return [Hit(self._record(h["entity"]), float(h["distance"])) for h in res[0]]

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        """BM25 in Milvus where available, else BM25 over a ``like``-matched pool."""
        expr = where_expr(check_namespace(namespace), where)
        tokens = [_token(t) for t in terms]
        if not tokens:
            return []
        if not self.capabilities.bm25:
            return self._lexical_fallback(expr, tokens, limit)
        self._flush_if_dirty()
        res = self._call(
            "searching memories",
            self._client.search,
            self.memories,
            data=[" ".join(tokens)],
            anns_field="sparse",
            filter=expr,
            limit=limit,
            output_fields=_RECORD_FIELDS,
            search_params={"metric_type": "BM25"},
        )
        # Milvus Lite reports BM25 as a negative distance; servers as a positive score.
        return [
            Hit(self._record(h["entity"]), abs(float(h["distance"]))) for h in res[0]
        ]

    def _lexical_fallback(self, expr: str, tokens: list[str], limit: int) -> list[Hit]:
        # Candidates containing any query token, scored by BM25 over the pool.
        # Expected on servers without BM25: traced on the store call, not logged.
        telemetry.degrade(
            telemetry.FALLBACK,
            "no BM25 in this Milvus: BM25 over a like-matched pool",
            log=False,
        )
        unique = list(dict.fromkeys(tokens))[:12]
        likes = " or ".join(f"lexical like {lit('%' + t + '%')}" for t in unique)
        fields = [*_RECORD_FIELDS, "lexical"]
        rows: list[dict[str, Any]] | None = None
        if self._infix_like:
            try:
                rows = list(
                    self._iter_rows(
                        self.memories, f"({expr}) and ({likes})", fields, 2000
                    )
                )
            except StoreError as exc:
                # Milvus 2.3 only matches prefixes ("ab%"): score the filtered
                # pool, and stop asking this server for infix matches.
                if "pattern" not in str(exc):
                    raise
                self._infix_like = False
        if rows is None:
            rows = list(self._iter_rows(self.memories, expr, fields, 2000))
        scores = bm25_scores(tokens, ((r["id"], r["lexical"].split()) for r in rows))
        rows = sorted(
            (r for r in rows if r["id"] in scores), key=lambda r: -scores[r["id"]]
        )
        return [Hit(self._record(r), scores[r["id"]]) for r in rows[:limit]]

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete records for real."""
        check_namespace(namespace)
        existing = self.get(namespace, ids)
        if existing:
            pks = [_pk(namespace, r.id) for r in existing]
            self._call("deleting memories", self._client.delete, self.memories, ids=pks)
            self._dirty = True
        return len(existing)

    def count(self, namespace: str, where: Where) -> int:
        """How many records match."""
        expr = where_expr(check_namespace(namespace), where)
        self._flush_if_dirty()
        rows = self._call(
            "counting",
            self._client.query,
            self.memories,
            filter=expr,
            output_fields=["count(*)"],
        )
        return int(rows[0]["count(*)"]) if rows else 0

    def namespaces(self) -> list[str]:
        """Namespaces holding records."""
        rows = self._iter_rows(self.memories, 'pk != ""', ["namespace"], 10**7)
        return sorted({r["namespace"] for r in rows})

    # -- edges and audit ---------------------------------------------------

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Insert or replace edges."""
        check_namespace(namespace)
        rows = [
            {
                "pk": _pk(namespace, e.key),
                "namespace": namespace,
                "src": e.src,
                "dst": e.dst,
                "type": e.type.value,
                "at": e.created_at,
                "doc": e.to_dict(),
                "stub": _STUB_VECTOR,
            }
            for e in edges
        ]
        if rows:
            self._call("writing edges", self._client.upsert, self._name("edges"), rows)
            self._dirty = True

    def _edge_expr(
        self, namespace: str, ids: Sequence[str], types: Sequence[EdgeType]
    ) -> str:
        expr = (
            f"namespace == {lit(namespace)} and "
            f"(src in {lits(ids)} or dst in {lits(ids)})"
        )
        if types:
            expr += f" and type in {lits([t.value for t in types])}"
        return expr

    def edges(
        self, namespace: str, ids: Sequence[str], *, types: Sequence[EdgeType] = ()
    ) -> list[Edge]:
        """Edges touching ``ids``, in one query."""
        check_namespace(namespace)
        if not ids:
            return []
        rows = self._iter_rows(
            self._name("edges"),
            self._edge_expr(namespace, ids, types),
            ["doc"],
            _QUERY_WINDOW,
        )
        return [Edge.from_dict(r["doc"]) for r in rows]

    def all_edges(self, namespace: str) -> list[Edge]:
        """Every edge of a namespace (paged; for caches and export)."""
        expr = f"namespace == {lit(check_namespace(namespace))}"
        rows = self._iter_rows(self._name("edges"), expr, ["doc"], 10**7)
        return [Edge.from_dict(r["doc"]) for r in rows]

    def delete_edges(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete edges touching ``ids``."""
        doomed = [_pk(namespace, e.key) for e in self.edges(namespace, ids)]
        if doomed:
            self._call(
                "deleting edges", self._client.delete, self._name("edges"), ids=doomed
            )
            self._dirty = True
        return len(doomed)

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        """Append audit entries."""
        check_namespace(namespace)
        rows = [
            {
                "pk": _pk(namespace, a.id),
                "namespace": namespace,
                "memory_id": a.memory_id,
                "op": a.op,
                "at": a.at,
                "doc": a.to_dict(),
                "stub": _STUB_VECTOR,
            }
            for a in entries
        ]
        if rows:
            self._call("writing audit", self._client.insert, self._name("audit"), rows)
            self._dirty = True

    def _audit_expr(self, namespace: str, memory_ids: Sequence[str] | None) -> str:
        expr = f"namespace == {lit(namespace)}"
        if memory_ids is not None:
            expr += f" and memory_id in {lits(memory_ids)}"
        return expr

    def audit(self, namespace: str, memory_id: str | None = None) -> list[AuditEntry]:
        """Audit entries, oldest first."""
        check_namespace(namespace)
        ids = None if memory_id is None else [memory_id]
        rows = self._iter_rows(
            self._name("audit"), self._audit_expr(namespace, ids), ["doc"], 10**7
        )
        return sorted(
            (AuditEntry.from_dict(r["doc"]) for r in rows), key=lambda a: a.at
        )

    def purge_audit(
        self, namespace: str, memory_ids: Sequence[str] | None = None
    ) -> int:
        """Delete audit entries of these memories (or of the whole namespace)."""
        check_namespace(namespace)
        if memory_ids is not None and not memory_ids:
            return 0
        expr = self._audit_expr(namespace, memory_ids)
        rows = list(self._iter_rows(self._name("audit"), expr, ["pk"], 10**7))
        if rows:
            self._call(
                "deleting audit",
                self._client.delete,
                self._name("audit"),
                ids=[r["pk"] for r in rows],
            )
            self._dirty = True
        return len(rows)

    # -- durability --------------------------------------------------------

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

    def exclusive(self, namespace: str, resource: str) -> AbstractContextManager[None]:
        """Keep other processes out of ``resource`` of ``namespace`` for a ``with`` block.

        Milvus Lite is single-process, so the engine's own lock is the whole
        guarantee there; on a server, a lease (:mod:`._lease`) is held.
        """
        if self.is_lite:
            return nullcontext()
        if self._leases is None:
            self._leases = MilvusLeases(self)
        return self._leases.hold(namespace, resource)

    def close(self) -> None:
        """Flush and release the client; the last backend on a Lite file frees its lock.

        Other processes can open the file once every backend of this process
        on it is closed (see ``_lite_server``).
        """
        try:
            if self._dirty:
                self.flush()
            self._record_rows()
        finally:
            try:
                self._client.close()
            finally:
                if self.is_lite:
                    lite_server.closed(self.uri)
