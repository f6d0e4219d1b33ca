"""The in-memory reference backend: the semantics every other backend must match."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext

import numpy as np

from hindsight_lg.backends._index import NamespaceIndex
from hindsight_lg.backends.base import (
    Capabilities,
    Hit,
    Where,
    check_namespace,
    check_writes,
)
from hindsight_lg.errors import EmbeddingMismatch
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord


class InMemoryBackend:
    """Dict-backed storage with exact search; nothing survives the process.

    Like LangGraph's ``InMemorySaver``: for tests, demos and as the reference
    the Milvus backend is checked against.

    Example:
        >>> from hindsight_lg import HindsightMemory
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    """

    def __init__(self) -> None:
        self.capabilities = Capabilities(bm25=True, name="memory")
        self._records: dict[str, dict[str, MemoryRecord]] = defaultdict(dict)
        self._edges: dict[str, dict[str, Edge]] = defaultdict(dict)
        self._audit: dict[str, list[AuditEntry]] = defaultdict(list)
        self._indexes: dict[str, NamespaceIndex] = defaultdict(NamespaceIndex)
        self._matrices: dict[str, tuple[list[str], np.ndarray]] = {}
        self._model: tuple[str, int] | None = None
        self._lock = threading.RLock()

    def setup(self, *, dim: int, model_id: str) -> None:
        """Remember the embedding model; a different one later is an error."""
        with self._lock:
            if self._model is None or not any(self._records.values()):
                self._model = (model_id, dim)
            elif self._model != (model_id, dim):
                raise EmbeddingMismatch(
                    f"store holds vectors of {self._model[0]} (dim {self._model[1]}), "
                    f"not {model_id} (dim {dim}); run `hindsight-lg reembed` to switch"
                )

    def stored_model(self) -> tuple[str, int] | None:
        """The (model id, dim) of the vectors held; ``None`` while none are."""
        with self._lock:
            return self._model if any(self._records.values()) else None

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        """Insert or replace records by id."""
        check_namespace(namespace)
        check_writes(records=records)
        with self._lock:
            for r in records:
                if r.namespace != namespace:
                    raise ValueError(f"record {r.id} belongs to {r.namespace!r}")
                self._records[namespace][r.id] = r.replace()
                self._indexes[namespace].put(r)
            self._matrices.pop(namespace, None)

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Records with these ids."""
        check_namespace(namespace)
        with self._lock:
            store = self._records.get(namespace, {})
            return [store[i].replace() for i in dict.fromkeys(ids) if i in store]

    def _matching(self, namespace: str, where: Where) -> list[MemoryRecord]:
        check_namespace(namespace)
        return [
            r for r in self._records.get(namespace, {}).values() if where.matches(r)
        ]

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Matching records, newest event first."""
        with self._lock:
            # Newest first; equal times by id, so every backend orders alike.
            rows = sorted(
                self._matching(namespace, where),
                key=lambda r: (r.event_time, r.id),
                reverse=True,
            )
            return [r.replace() for r in rows[:limit]]

    def search_dense(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Exact cosine search over every vector of the namespace, then the filter.

        Hits always carry their vectors (``vectors`` changes nothing here).
        """
        check_namespace(namespace)
        with self._lock:
            ids, matrix = self._vectors(namespace)
            if not ids:
                return []
            sims = matrix @ np.asarray(vector, dtype=np.float32)
            store = self._records[namespace]
            hits: list[Hit] = []
            for i in np.argsort(-sims):
                record = store[ids[i]]
                if where.matches(record):
                    hits.append(Hit(record.replace(), float(sims[i])))
                    if len(hits) >= limit:
                        break
            return hits

    def _vectors(self, namespace: str) -> tuple[list[str], np.ndarray]:
        # The stacked matrix is rebuilt only after a write to the namespace.
        if namespace not in self._matrices:
            rows = [r for r in self._records.get(namespace, {}).values() if r.dense]
            matrix = np.asarray([r.dense for r in rows], dtype=np.float32)
            self._matrices[namespace] = ([r.id for r in rows], matrix)
        return self._matrices[namespace]

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        """BM25 with document frequencies over the whole namespace."""
        check_namespace(namespace)
        with self._lock:
            index = self._indexes.get(namespace)
            hits = index.lexical(terms, where, limit) if index else []
            # The index keeps slim copies; hand out the full stored records.
            store = self._records[namespace]
            return [Hit(store[r.id].replace(), score) for r, score in hits]

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete records for real."""
        check_namespace(namespace)
        with self._lock:
            store = self._records.get(namespace, {})
            self._matrices.pop(namespace, None)
            for i in set(ids):
                self._indexes[namespace].drop(i)
            return sum(store.pop(i, None) is not None for i in set(ids))

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Insert or replace edges."""
        check_namespace(namespace)
        check_writes(edges=edges)
        with self._lock:
            for e in edges:
                self._edges[namespace][e.key] = e

    def edges(
        self, namespace: str, ids: Sequence[str], *, types: Sequence[EdgeType] = ()
    ) -> list[Edge]:
        """Edges with either end in ``ids``."""
        check_namespace(namespace)
        wanted = set(ids)
        with self._lock:
            return [
                e
                for e in self._edges.get(namespace, {}).values()
                if (e.src in wanted or e.dst in wanted)
                and (not types or e.type in types)
            ]

    def all_edges(self, namespace: str) -> list[Edge]:
        """Every edge of a namespace."""
        check_namespace(namespace)
        with self._lock:
            return list(self._edges.get(namespace, {}).values())

    def delete_edges(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete edges touching ``ids``."""
        with self._lock:
            doomed = [e.key for e in self.edges(namespace, ids)]
            for key in doomed:
                del self._edges[namespace][key]
            return len(doomed)

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        """Append audit entries."""
        check_namespace(namespace)
        check_writes(audit=entries)
        with self._lock:
            self._audit[namespace].extend(entries)

    def audit(self, namespace: str, memory_id: str | None = None) -> list[AuditEntry]:
        """Audit entries, oldest first."""
        check_namespace(namespace)
        with self._lock:
            rows = [
                a
                for a in self._audit.get(namespace, [])
                if memory_id is None or a.memory_id == memory_id
            ]
            return sorted(rows, key=lambda a: a.at)

    def purge_audit(
        self, namespace: str, memory_ids: Sequence[str] | None = None
    ) -> int:
        """Delete audit entries."""
        check_namespace(namespace)
        with self._lock:
            rows = self._audit.get(namespace, [])
            keep = (
                []
                if memory_ids is None
                else [a for a in rows if a.memory_id not in set(memory_ids)]
            )
            self._audit[namespace] = keep
            return len(rows) - len(keep)

    def namespaces(self) -> list[str]:
        """Namespaces holding records."""
        with self._lock:
            return sorted(ns for ns, rows in self._records.items() if rows)

    def count(self, namespace: str, where: Where) -> int:
        """How many records match."""
        with self._lock:
            return len(self._matching(namespace, where))

    def flush(self) -> None:
        """Nothing to flush."""

    def exclusive(self, namespace: str, resource: str) -> AbstractContextManager[None]:
        """Nothing to hold: one process owns this backend."""
        return nullcontext()

    def close(self) -> None:
        """Nothing to close."""
