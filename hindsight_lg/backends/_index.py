"""A namespace's records (without vectors), BM25 postings and edge adjacency.

Shared by the in-memory reference backend and the read cache, so both score
BM25 the same way: document frequencies over the whole namespace.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.lexical import idf, saturation
from hindsight_lg.model import CONTEXT_KEY, Edge, MemoryRecord


def record_text(record: MemoryRecord) -> str:
    """The text a record is searched by: content, entities, participants and context.

    The context (``meta["context"]``, set by capture) is the rest of the turn
    an event was split from: its words find the event without being shown.
    """
    context = record.meta.get(CONTEXT_KEY, "")
    extra = [context] if isinstance(context, str) and context else []
    return " ".join([record.content, *record.entities, *record.participants, *extra])


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
    # BM25 in numpy: every record gets a fixed slot; each term's posting is
    # turned into (slots, tfs) arrays on first use and dropped when it changes.
    _slots: dict[str, int] = field(default_factory=dict)
    _ids: list[str] = field(default_factory=list)
    _slot_lengths: list[int] = field(default_factory=list)
    _total_length: int = 0
    _arrays: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # (event_time, id), oldest first: time-window reads walk only their window.
    _by_time: list[tuple[float, str]] = field(default_factory=list)

    def put(self, record: MemoryRecord) -> None:
        self.drop(record.id)
        if self.keep_vectors and record.dense:
            self.vectors[record.id] = np.asarray(record.dense, dtype=np.float32)
        slim = record.replace(dense=[], sparse={})
        self.records[record.id] = slim
        bisect.insort(self._by_time, (record.event_time, record.id))
        counts = Counter(lexical_terms(record_text(record)))
        length = sum(counts.values())
        self.lengths[record.id] = length
        self._total_length += length
        slot = self._slot(record.id)
        self._slot_lengths[slot] = length
        for term, tf in counts.items():
            self.postings[term][record.id] = tf
            self._arrays.pop(term, None)

    def _slot(self, memory_id: str) -> int:
        if memory_id not in self._slots:
            self._slots[memory_id] = len(self._ids)
            self._ids.append(memory_id)
            self._slot_lengths.append(0)
        return self._slots[memory_id]

    def drop(self, memory_id: str) -> None:
        self._matrix = None
        self.vectors.pop(memory_id, None)
        old = self.records.pop(memory_id, None)
        self._total_length -= self.lengths.pop(memory_id, 0)
        if old is not None:
            at = bisect.bisect_left(self._by_time, (old.event_time, memory_id))
            if at < len(self._by_time) and self._by_time[at][1] == memory_id:
                del self._by_time[at]
            for term in set(lexical_terms(record_text(old))):
                self.postings.get(term, {}).pop(memory_id, None)
                self._arrays.pop(term, None)

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

    def bm25(self, query: Sequence[str], top: int | None = None) -> dict[str, float]:
        """BM25 with the namespace's own statistics: document frequencies over all
        of its records. With ``top``, only the best ``top`` scores are returned.
        """
        total = len(self.records)
        if not total:
            return {}
        avg = self._total_length / total or 1.0
        lengths = np.asarray(self._slot_lengths, dtype=np.float64)
        scores = np.zeros(len(self._ids), dtype=np.float64)
        # Terms in query order (not set order): float sums then do not depend
        # on string hashing, so equal queries rank ties the same in every run.
        for term in dict.fromkeys(query):
            posting = self.postings.get(term)
            if not posting:
                continue
            slots, tfs = self._term_arrays(term, posting)
            scores[slots] += idf(total, len(posting)) * saturation(
                tfs, lengths[slots], avg
            )
        hit = np.flatnonzero(scores > 0)
        if top is not None and len(hit) > top:
            hit = hit[np.argpartition(-scores[hit], top)[:top]]
        return {self._ids[i]: float(scores[i]) for i in hit}

    def newest(self, where: Where, limit: int) -> list[MemoryRecord]:
        """Records passing ``where``, newest event first, at most ``limit``.

        Walks back from the end of ``where.until`` and stops at ``where.since``,
        so a recency or time-window read costs its window, not the namespace.
        """
        end = len(self._by_time)
        if where.until is not None:
            end = bisect.bisect_left(self._by_time, (where.until, ""))
        found: list[MemoryRecord] = []
        for i in range(end - 1, -1, -1):
            when, memory_id = self._by_time[i]
            if where.since is not None and when < where.since:
                break
            record = self.records[memory_id]
            if where.matches(record):
                found.append(record)
                if len(found) >= limit:
                    break
        return found

    def lexical(
        self, query: Sequence[str], where: Where, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        """The ``limit`` best BM25 matches passing ``where``, best first.

        Scores only a shortlist first; when the filter leaves too few of it,
        everything scored is considered.
        """
        shortlist = max(limit * 8, 200)
        scores = self.bm25(query, top=shortlist)
        hits = [
            (self.records[i], s)
            for i, s in scores.items()
            if where.matches(self.records[i])
        ]
        if len(hits) < limit and len(scores) == shortlist:
            scores = self.bm25(query)
            hits = [
                (self.records[i], s)
                for i, s in scores.items()
                if where.matches(self.records[i])
            ]
        hits.sort(key=lambda h: (-h[1], h[0].id))
        return hits[:limit]

    def _term_arrays(
        self, term: str, posting: dict[str, int]
    ) -> tuple[np.ndarray, np.ndarray]:
        if term not in self._arrays:
            slots = np.fromiter((self._slots[i] for i in posting), dtype=np.int64)
            tfs = np.fromiter(posting.values(), dtype=np.float64)
            self._arrays[term] = (slots, tfs)
        return self._arrays[term]

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
