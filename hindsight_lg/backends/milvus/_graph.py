"""Edges and audit entries in Milvus: one collection each, keyed like records."""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_lg.backends.base import check_namespace, check_writes
from hindsight_lg.backends.milvus._core import (
    EVERYTHING,
    QUERY_WINDOW,
    STUB_VECTOR,
    MilvusCore,
    pk,
)
from hindsight_lg.backends.milvus._expr import lit, lits
from hindsight_lg.model import AuditEntry, Edge, EdgeType


class GraphOps(MilvusCore):
    """The edge and audit half of :class:`~hindsight_lg.backends.base.MemoryBackend`."""

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Insert or replace edges."""
        check_namespace(namespace)
        check_writes(edges=edges)
        rows = [
            {
                "pk": pk(namespace, e.key),
                "namespace": namespace,
                "src": e.src,
                "dst": e.dst,
                "type": e.type.value,
                "at": e.created_at,
                "doc": e.to_dict(),
                "stub": STUB_VECTOR,
            }
            for e in edges
        ]
        if rows:
            self._write_rows("writing edges", "upsert", self._name("edges"), rows)
            self._dirty = True
            self._wrote(namespace)

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
            QUERY_WINDOW,
        )
        return [Edge.from_dict(r["doc"]) for r in rows]

    def all_edges(self, namespace: str) -> list[Edge]:
        """Every edge of a namespace (paged; for caches and export)."""
        expr = f"namespace == {lit(check_namespace(namespace))}"
        rows = self._iter_rows(self._name("edges"), expr, ["doc"], EVERYTHING)
        return [Edge.from_dict(r["doc"]) for r in rows]

    def delete_edges(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete edges touching ``ids``."""
        doomed = [pk(namespace, e.key) for e in self.edges(namespace, ids)]
        if doomed:
            self._call(
                "deleting edges", self._client.delete, self._name("edges"), ids=doomed
            )
            self._dirty = True
            self._wrote(namespace, wait=True)
        return len(doomed)

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        """Append audit entries."""
        check_namespace(namespace)
        check_writes(audit=entries)
        rows = [
            {
                "pk": pk(namespace, a.id),
                "namespace": namespace,
                "memory_id": a.memory_id,
                "op": a.op,
                "at": a.at,
                "doc": a.to_dict(),
                "stub": STUB_VECTOR,
            }
            for a in entries
        ]
        if rows:
            self._write_rows("writing audit", "insert", self._name("audit"), rows)
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
            self._name("audit"), self._audit_expr(namespace, ids), ["doc"], EVERYTHING
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
        rows = list(self._iter_rows(self._name("audit"), expr, ["pk"], EVERYTHING))
        if rows:
            self._call(
                "deleting audit",
                self._client.delete,
                self._name("audit"),
                ids=[r["pk"] for r in rows],
            )
            self._dirty = True
        return len(rows)
