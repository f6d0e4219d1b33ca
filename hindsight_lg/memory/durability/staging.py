"""Write batching for the capture path: one store round trip per collection.

Capturing a turn places each event (create, merge or supersede), links it and
audits it. Done naively that is several store writes per event, and Milvus
Lite spends tens of milliseconds on each. :class:`StagedWrites` stands in for
the backend during a capture call: writes are buffered, reads see the buffer
first (so a later event of the same batch merges into an earlier one), and
:meth:`StagedWrites.commit` sends one upsert, one edge write and one audit
append per namespace.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from hindsight_lg._text import terms as terms_of
from hindsight_lg.backends import ForwardingBackend
from hindsight_lg.backends.base import Hit, MemoryBackend, Where
from hindsight_lg.model import AuditEntry, Edge, MemoryRecord


class StagedWrites(ForwardingBackend):
    """A backend view that buffers writes until :meth:`commit`.

    Only the calls the write path makes are staged (``upsert``, ``get``,
    ``search_dense``, ``search_lexical``, ``add_edges``, ``append_audit``);
    anything else passes
    through to the inner backend.
    """

    def __init__(self, inner: MemoryBackend) -> None:
        super().__init__(inner)
        self._records: dict[str, dict[str, MemoryRecord]] = defaultdict(dict)
        self._edges: dict[str, dict[str, Edge]] = defaultdict(dict)
        self._audit: dict[str, list[AuditEntry]] = defaultdict(list)
        self._arrays: dict[tuple[str, int], np.ndarray] = {}

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        for r in records:
            self._records[namespace][r.id] = r

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        for e in edges:
            self._edges[namespace][e.key] = e

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        self._audit[namespace].extend(entries)

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        staged = self._records.get(namespace, {})
        missing = [i for i in ids if i not in staged]
        found = {r.id: r for r in self.inner.get(namespace, missing, vectors=vectors)}
        found.update({i: staged[i] for i in ids if i in staged})
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def search_dense(
        self, namespace: str, vector: Sequence[float], where: Where, *, limit: int
    ) -> list[Hit]:
        """Nearest records, staged ones included and taking precedence."""
        # A read cache's exact scan where there is one (see ForwardingBackend).
        search = getattr(self.inner, "search_dense_local", self.inner.search_dense)
        hits = self._unstaged(namespace, search(namespace, vector, where, limit=limit))
        staged = [
            r
            for r in self._records.get(namespace, {}).values()
            if r.dense and where.matches(r)
        ]
        if staged:
            matrix = np.stack([self._vector(r) for r in staged])
            sims = matrix @ np.asarray(vector, dtype=np.float32)
            hits.update(
                {r.id: Hit(r, float(x)) for r, x in zip(staged, sims, strict=True)}
            )
        return sorted(hits.values(), key=lambda h: -h.score)[:limit]

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        """Best records by the inner index; staged ones that share a term first."""
        inner = self.inner.search_lexical(namespace, terms, where, limit=limit)
        hits = self._unstaged(namespace, inner)
        wanted = set(terms)
        for r in self._records.get(namespace, {}).values():
            if where.matches(r) and wanted.intersection(terms_of(r.content)):
                hits[r.id] = Hit(r, float("inf"))
        return sorted(hits.values(), key=lambda h: -h.score)[:limit]

    def _unstaged(self, namespace: str, hits: Sequence[Hit]) -> dict[str, Hit]:
        # A record changed in this batch is read from the batch: the store's
        # copy may still say "active" for one superseded a moment ago.
        staged = self._records.get(namespace, {})
        return {h.record.id: h for h in hits if h.record.id not in staged}

    def _vector(self, record: MemoryRecord) -> np.ndarray:
        # Converted once per staged version of a record, not once per search.
        key = (record.id, record.version)
        if key not in self._arrays:
            self._arrays[key] = np.asarray(record.dense, dtype=np.float32)
        return self._arrays[key]

    @property
    def empty(self) -> bool:
        """Whether no write is buffered."""
        return not (self._records or self._edges or self._audit)

    def commit(self) -> None:
        """Send the buffered writes: records first, then edges, then audit."""
        for namespace, records in self._records.items():
            self.inner.upsert(namespace, list(records.values()))
        for namespace, edges in self._edges.items():
            self.inner.add_edges(namespace, list(edges.values()))
        for namespace, entries in self._audit.items():
            self.inner.append_audit(namespace, entries)
        self._records.clear()
        self._edges.clear()
        self._audit.clear()
