"""A namespace's records (without vectors), BM25 postings and edge adjacency.

Shared by the in-memory reference backend and the read cache, so both score
BM25 the same way: document frequencies over the whole namespace.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.memory.model import Edge, MemoryRecord
from hindsight_lg.store._lexical import K1, B
from hindsight_lg.store.base import Where


def record_text(record: MemoryRecord) -> str:
    """The text a record is searched by: content plus entities and participants."""
    return " ".join([record.content, *record.entities, *record.participants])


@dataclass(slots=True)
class NamespaceIndex:
    """One namespace's records, BM25 postings, adjacency and (optionally) vectors.

    With ``keep_vectors`` the dense vectors are kept too, for exact
    near-duplicate checks on the write path without a store round trip.
    """

    loaded_at: float = 0.0
    keep_vectors: bool = False
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    _matrix: tuple[list[str], np.ndarray] | None = None
    records: dict[str, MemoryRecord] = field(default_factory=dict)
    lengths: dict[str, int] = field(default_factory=dict)
    postings: dict[str, dict[str, int]] = field(
        default_factory=lambda: defaultdict(dict)
    )
    adjacency: dict[str, dict[str, Edge]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    def put(self, record: MemoryRecord) -> None:
        self.drop(record.id)
        if self.keep_vectors and record.dense:
            self.vectors[record.id] = np.asarray(record.dense, dtype=np.float32)
        slim = record.replace(dense=[], sparse={})
        self.records[record.id] = slim
        counts = Counter(lexical_terms(record_text(record)))
        self.lengths[record.id] = sum(counts.values())
        for term, tf in counts.items():
            self.postings[term][record.id] = tf

    def drop(self, memory_id: str) -> None:
        self._matrix = None
        self.vectors.pop(memory_id, None)
        old = self.records.pop(memory_id, None)
        self.lengths.pop(memory_id, None)
        if old is not None:
            for term in set(lexical_terms(record_text(old))):
                self.postings.get(term, {}).pop(memory_id, None)

    def link(self, edge: Edge) -> None:
        self.adjacency[edge.src][edge.key] = edge
        self.adjacency[edge.dst][edge.key] = edge

    def unlink(self, memory_id: str) -> int:
        doomed = list(self.adjacency.pop(memory_id, {}).values())
        for e in doomed:
            self.adjacency.get(e.dst if e.src == memory_id else e.src, {}).pop(
                e.key, None
            )
        return len(doomed)

    def bm25(self, query: Sequence[str]) -> dict[str, float]:
        """BM25 with the namespace's own statistics (same formula as the reference)."""
        total = len(self.records)
        if not total:
            return {}
        avg = sum(self.lengths.values()) / total or 1.0
        scores: dict[str, float] = defaultdict(float)
        for term in set(query):
            posting = self.postings.get(term)
            if not posting:
                continue
            idf = math.log(1 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
            for mid, tf in posting.items():
                norm = K1 * (1 - B + B * self.lengths[mid] / avg)
                scores[mid] += idf * tf * (K1 + 1) / (tf + norm)
        return scores

    def nearest(
        self, vector: Sequence[float], where: Where, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        """Exact cosine neighbours among the kept vectors that pass ``where``."""
        if self._matrix is None:
            ids = list(self.vectors)
            rows = [self.vectors[i] for i in ids]
            self._matrix = (ids, np.stack(rows) if rows else np.zeros((0, 1)))
        ids, matrix = self._matrix
        if not ids:
            return []
        sims = matrix @ np.asarray(vector, dtype=np.float32)
        found: list[tuple[MemoryRecord, float]] = []
        for i in np.argsort(-sims):
            record = self.records[ids[i]]
            if where.matches(record):
                found.append((record, float(sims[i])))
                if len(found) >= limit:
                    break
        return found
