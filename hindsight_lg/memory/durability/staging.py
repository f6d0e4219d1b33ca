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
from dataclasses import dataclass, field

import numpy as np

from hindsight_lg._text import terms as terms_of
from hindsight_lg.backends import ForwardingBackend, local_dense_search
from hindsight_lg.backends.base import (
    Hit,
    MemoryBackend,
    Where,
    check_writes,
)
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
        # Stacked vectors of staged records per namespace, and the ids
        # staged since they were last stacked.
        self._arrays: dict[str, _Rows] = {}
        self._dirty: dict[str, set[str]] = defaultdict(set)
        self._term_cache: dict[tuple[str, int, int], frozenset[str]] = {}

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        dirty = self._dirty[namespace]
        for r in records:
            self._records[namespace][r.id] = r
            dirty.add(r.id)

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
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Nearest records, staged ones included and taking precedence.

        The staged vectors of a namespace are kept stacked and updated row by
        row as records are staged, so each search costs one matrix product
        over the staged rows and Python work for the best ``limit`` only:
        a turn of n events costs O(n) Python steps, not O(n^2).
        """
        # A read cache's exact scan where there is one (see ForwardingBackend).
        found = local_dense_search(
            self.inner, namespace, vector, where, limit=limit, vectors=vectors
        )
        hits = self._unstaged(namespace, found)
        rows = self._stacked(namespace)
        if rows is not None:
            hits.update(rows.best(np.asarray(vector, dtype=np.float32), where, limit))
        return sorted(hits.values(), key=lambda h: -h.score)[:limit]

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        """Best records by the inner index; staged ones that share a term first."""
        inner = self.inner.search_lexical(namespace, terms, where, limit=limit)
        hits = self._unstaged(namespace, inner)
        wanted = set(terms)
        for r in self._records.get(namespace, {}).values():
            if where.matches(r) and not wanted.isdisjoint(self._terms_of(r)):
                hits[r.id] = Hit(r, float("inf"))
        return sorted(hits.values(), key=lambda h: -h.score)[:limit]

    def _terms_of(self, record: MemoryRecord) -> frozenset[str]:
        # Read once per staged version of a record, not once per search: a
        # turn of n events would otherwise cost n^2 tokenisations.
        key = (record.id, record.version, len(record.content))
        found = self._term_cache.get(key)
        if found is None:
            found = self._term_cache[key] = frozenset(terms_of(record.content))
        return found

    def _unstaged(self, namespace: str, hits: Sequence[Hit]) -> dict[str, Hit]:
        # A record changed in this batch is read from the batch: the store's
        # copy may still say "active" for one superseded a moment ago.
        staged = self._records.get(namespace, {})
        return {h.record.id: h for h in hits if h.record.id not in staged}

    def _stacked(self, namespace: str) -> _Rows | None:
        staged = self._records.get(namespace)
        if not staged:
            return None
        rows = self._arrays.get(namespace)
        if rows is None:
            rows = self._arrays[namespace] = _Rows()
            self._dirty[namespace] = set(staged)
        for record_id in self._dirty.pop(namespace, ()):
            record = staged.get(record_id)
            if record is not None:
                rows.put(record)
        return rows

    @property
    def empty(self) -> bool:
        """Whether no write is buffered."""
        return not (self._records or self._edges or self._audit)

    def check(self) -> None:
        """Refuse, before anything is written, what the store could not hold.

        Raises:
            ValueError: a buffered record, edge or audit entry is over a
                limit of :mod:`hindsight_lg.backends.base`.
        """
        for records in self._records.values():
            check_writes(records=list(records.values()))
        for edges in self._edges.values():
            check_writes(edges=list(edges.values()))
        for entries in self._audit.values():
            check_writes(audit=entries)

    def commit(self) -> None:
        """Send the buffered writes: records first, then edges, then audit.

        Raises:
            ValueError: see :meth:`check`; nothing was written.
        """
        self.check()
        for namespace, records in self._records.items():
            self.inner.upsert(namespace, list(records.values()))
        for namespace, edges in self._edges.items():
            self.inner.add_edges(namespace, list(edges.values()))
        for namespace, entries in self._audit.items():
            self.inner.append_audit(namespace, entries)
        self._records.clear()
        self._edges.clear()
        self._audit.clear()
        self._arrays.clear()
        self._dirty.clear()
        self._term_cache.clear()


class _Rows:
    """Staged records of one namespace with their vectors stacked in one matrix."""

    def __init__(self) -> None:
        self.records: list[MemoryRecord] = []
        self.index: dict[str, int] = {}
        self.matrix = np.zeros((0, 0), dtype=np.float32)

    def put(self, record: MemoryRecord) -> None:
        """Add or refresh one record's row (no vector: never a search hit)."""
        if not record.dense:
            return
        vector = np.asarray(record.dense, dtype=np.float32)
        row = self.index.get(record.id)
        if row is None:
            row = len(self.records)
            self.index[record.id] = row
            self.records.append(record)
            self._grow(row + 1, vector.shape[0])
        self.records[row] = record
        self.matrix[row] = vector

    def _grow(self, rows: int, dim: int) -> None:
        if self.matrix.shape[0] >= rows:
            return
        bigger = np.zeros((max(8, 2 * self.matrix.shape[0], rows), dim), np.float32)
        if self.matrix.shape[0]:
            bigger[: self.matrix.shape[0]] = self.matrix
        self.matrix = bigger

    def best(self, vector: np.ndarray, where: Where, limit: int) -> dict[str, Hit]:
        """The ``limit`` best rows passing ``where``, best first."""
        n = len(self.records)
        sims = self.matrix[:n] @ vector
        order = np.argsort(-sims)
        found: dict[str, Hit] = {}
        for i in order:
            record = self.records[int(i)]
            if where.matches(record):
                found[record.id] = Hit(record, float(sims[i]))
                if len(found) >= limit:
                    break
        return found


@dataclass(slots=True)
class Batch:
    """Staged writes detached for one commit round, and how far each namespace got."""

    records: dict[str, dict[str, MemoryRecord]]
    edges: dict[str, dict[str, Edge]]
    audit: dict[str, list[AuditEntry]]
    captures: list[tuple[str, str]]
    written: dict[str, set[str]] = field(default_factory=dict)
    errors: dict[str, Exception] = field(default_factory=dict)

    def namespaces(self) -> list[str]:
        """Every namespace with writes in the batch, sorted."""
        return sorted(set(self.records) | set(self.edges) | set(self.audit))
