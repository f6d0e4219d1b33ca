"""Setup of the Milvus backend: loading, the meta rows, the Lite row ledger.

``setup()`` creates what is missing (schemas and indexes: :mod:`._schema`),
loads all four collections (repairing a torn Milvus Lite index file once),
checks the Lite row ledger and the stored embedding model, and follows the
pointer row that re-embedding writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.backends.base import Capabilities
from hindsight_lg.backends.milvus._core import (
    ALL_ROWS,
    POINTER,
    SCHEMA_VERSION,
    STUB_VECTOR,
)
from hindsight_lg.backends.milvus._expr import lit
from hindsight_lg.backends.milvus._lite_repair import remove_index_sidecars, unreadable
from hindsight_lg.backends.milvus._schema import SchemaOps, partition_key
from hindsight_lg.errors import EmbeddingMismatch, StoreError, StoreTimeout

_EMBEDDING_ROW = 'pk == "embedding"'


class SetupOps(SchemaOps):
    """Setup, loading, the meta rows and the Lite row ledger (schemas: ``_schema``)."""

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
                filter=ALL_ROWS if exact else "",
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

    def setup(self, *, dim: int, model_id: str) -> None:
        """Create the collections if missing; check the stored embedding model."""
        # One listing instead of a round trip per collection: opening a store
        # is most of what a command that embeds nothing spends.
        present = set(self._call("listing collections", self._client.list_collections))
        self.active_prefix = self.read_pointer(present)
        if self.memories not in present:
            self._choose_tenancy()
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
        fields = self._fields_of_memories()
        tenancy = "partition_key" if partition_key(fields) else "filter"
        stored = self._check_model(dim, model_id, tenancy)
        self.capabilities = Capabilities(
            bm25=any(f.get("name") == "sparse" for f in fields),
            name=self.capabilities.name,
            remote=self.capabilities.remote,
        )
        if not self.is_lite and "tenancy" not in stored and tenancy == "filter":
            # Made before tenancy partitions were chosen at creation.
            telemetry.get_logger().warning(
                "milvus_tenants_not_partitioned",
                collection=self.memories,
                hint="every search filters the whole collection by namespace; "
                "`hindsight-lg reembed --migrate --uri ...` copies the store "
                "into collections partitioned by namespace (vectors kept) "
                "where the server supports it",
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

    def stored_model(self) -> tuple[str, int] | None:
        """The (model id, dimension) the store's vectors came from.

        Answers before :meth:`setup` too, so an engine opened without an
        embedder can adopt the store's own: it follows the pointer that
        re-embedding writes and loads the meta collection only.

        Returns:
            ``None`` for a store that records no model yet (a new one).
        """
        present = set(self._call("listing collections", self._client.list_collections))
        meta = f"{self.read_pointer(present)}_meta"
        if meta not in present:
            return None
        self._load(meta, verify=False)  # setup() verifies every collection
        rows = self._embedding_rows(meta)
        if not rows:
            return None
        doc = rows[0]["doc"]
        return str(doc.get("model_id")), int(doc.get("dim"))

    def _embedding_rows(self, meta: str | None = None) -> list[dict[str, Any]]:
        return list(
            self._call(
                "reading meta",
                self._client.query,
                meta or self._name("meta"),
                filter=_EMBEDDING_ROW,
                output_fields=["doc"],
            )
        )

    def _check_model(self, dim: int, model_id: str, tenancy: str) -> dict[str, Any]:
        """Record the model (and tenancy) of a new store, or check an old one's.

        Returns:
            The stored embedding row's document.
        """
        rows = self._embedding_rows()
        if not rows:
            doc = {
                "model_id": model_id,
                "dim": dim,
                "schema_version": SCHEMA_VERSION,
                "tenancy": tenancy,
            }
            self._put_meta("embedding", doc)
            return doc
        stored: dict[str, Any] = rows[0]["doc"]
        if (stored.get("model_id"), stored.get("dim")) != (model_id, dim):
            raise EmbeddingMismatch(
                f"collection {self.memories} holds vectors of {stored.get('model_id')} "
                f"(dim {stored.get('dim')}), but the embedder is {model_id} (dim {dim}). "
                "Use the same embedder, or run `hindsight-lg reembed` to re-embed into "
                "a new collection."
            )
        return stored

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
            filter=f"pk == {lit(POINTER)}",
            output_fields=["doc"],
        )
        return str(rows[0]["doc"]["prefix"]) if rows else self.prefix

    def switch_to(self, prefix: str) -> None:
        """Point ``<prefix>_meta`` at another prefix's collections.

        One single-row upsert, so a process opening the store sees either the
        old collections or the new ones, never a mix.
        """
        row = {"pk": POINTER, "namespace": "", "at": 0.0, "doc": {"prefix": prefix}}
        row["stub"] = STUB_VECTOR
        base = f"{self.prefix}_meta"
        self._call("switching collections", self._client.upsert, base, [row])
        self._call("flushing", self._client.flush, base)

    def _put_meta(self, key: str, doc: dict[str, Any]) -> None:
        row = {"pk": key, "namespace": "", "at": 0.0, "doc": doc, "stub": STUB_VECTOR}
        self._call("writing meta", self._client.upsert, self._name("meta"), [row])
