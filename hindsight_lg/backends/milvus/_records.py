"""Records in Milvus: rows to and from :class:`MemoryRecord`, reads, searches, writes."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.backends._index import record_text
from hindsight_lg.backends.base import Hit, Where, check_namespace, check_writes
from hindsight_lg.backends.lexical import bm25_scores
from hindsight_lg.backends.milvus._core import (
    ALL_ROWS,
    EVERYTHING,
    RECORD_FIELDS,
    SCALARS,
    MilvusCore,
    lexical_tokens,
    pk,
    token,
)
from hindsight_lg.backends.milvus._expr import lit, where_expr
from hindsight_lg.errors import StoreError
from hindsight_lg.model import MemoryRecord

# The lexical field is VARCHAR(65535), counted in bytes on a server.
_LEXICAL_BYTES = 60000


def _fit_bytes(text: str, limit: int) -> str:
    data = text.encode("utf-8", "replace")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


class RecordOps(MilvusCore):
    """The record half of :class:`~hindsight_lg.backends.base.MemoryBackend`."""

    def _row(self, r: MemoryRecord) -> dict[str, Any]:
        doc = r.to_dict(vectors=False)
        row: dict[str, Any] = {k: doc[k] for k in SCALARS}
        row["event_time"] = float(r.event_time)
        row["created_at"] = float(r.created_at)
        row.update(
            pk=pk(r.namespace, r.id),
            id=r.id,
            doc=doc,
            dense=list(r.dense),
            lexical=_fit_bytes(lexical_tokens(record_text(r)), _LEXICAL_BYTES),
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
        check_writes(records=records)
        rows = [self._row(r) for r in records]
        self._write_rows("writing memories", "upsert", self.memories, rows)
        self._dirty = True
        self._wrote(namespace)

    def _fields(self, vectors: bool) -> list[str]:
        return [*RECORD_FIELDS, "dense"] if vectors else RECORD_FIELDS

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Records with these ids, any status."""
        check_namespace(namespace)
        if not ids:
            return []
        wanted = list(dict.fromkeys(ids))
        rows = self._get_rows(namespace, wanted, vectors)
        missing = [i for i in wanted if i not in {r["id"] for r in rows}]
        if missing and not self.is_lite and self._read_level() != "Strong":
            # Not found at Session may be another process's write not seen
            # yet (a capture on another replica a moment ago): ask again
            # Strong, so a memory that exists is never reported missing.
            with self.strong_reads():
                rows += self._get_rows(namespace, missing, vectors)
        return [self._record(row) for row in rows]

    def _get_rows(
        self, namespace: str, ids: Sequence[str], vectors: bool
    ) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = list(
            self._call(
                "reading memories",
                self._client.get,
                self.memories,
                ids=[pk(namespace, i) for i in ids],
                output_fields=self._fields(vectors),
            )
        )
        return found

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
            light = self._iter_rows(
                self.memories, expr, ["pk", "event_time"], EVERYTHING
            )
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

    def search_dense(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Cosine nearest neighbours under the filter."""
        found = self._nearest(namespace, vector, where, limit, self._fields(vectors))
        return [Hit(self._record(h["entity"]), float(h["distance"])) for h in found]

    def search_dense_ids(
        self, namespace: str, vector: Sequence[float], where: Where, *, limit: int
    ) -> list[tuple[str, float]]:
        """Ids and cosines of the nearest neighbours under the filter, no records.

        For a read cache that holds the namespace and serves the records
        itself (:mod:`hindsight_lg.backends._by_ids`): the server sends ids, not
        the documents of every hit for this process to decode.
        """
        found = self._nearest(namespace, vector, where, limit, ["id"])
        return [(str(h["entity"]["id"]), float(h["distance"])) for h in found]

    def _nearest(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        limit: int,
        fields: list[str],
    ) -> list[dict[str, Any]]:
        """The server's dense hits under the filter, each with ``fields``."""
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
            output_fields=fields,
            search_params={"metric_type": "COSINE"},
        )
        return list(res[0])

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        """BM25 in Milvus where available, else BM25 over a ``like``-matched pool."""
        expr = where_expr(check_namespace(namespace), where)
        tokens = [token(t) for t in terms]
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
            output_fields=RECORD_FIELDS,
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
        fields = [*RECORD_FIELDS, "lexical"]
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
            pks = [pk(namespace, r.id) for r in existing]
            self._call("deleting memories", self._client.delete, self.memories, ids=pks)
            self._dirty = True
            self._wrote(namespace, wait=True)
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
        rows = self._iter_rows(self.memories, ALL_ROWS, ["namespace"], EVERYTHING)
        return sorted({r["namespace"] for r in rows})
