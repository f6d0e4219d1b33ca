"""A namespace's records, BM25 postings, edge adjacency and (optionally) vectors.

Shared by the in-memory reference backend and the read cache, so both score
BM25 the same way: document frequencies over the whole namespace. The read
cache also keeps the dense vectors, for exact cosine search in numpy.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends.base import Where, tie_order
from hindsight_lg.backends.lexical import idf, saturation
from hindsight_lg.model import CONTEXT_KEY, Edge, MemoryRecord, Status

# Estimated bytes a cached record costs besides its text and vector: the slim
# record, its postings, time-index entry and slot. tracemalloc measured about
# 1.4 KB for the bench's synthetic turns; the rest is room for edges.
RECORD_BYTES = 2048


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

    With ``keep_vectors`` the dense vectors are kept too (one row per slot of
    a :class:`DenseRows`), for exact cosine search without a store round trip.
    """

    loaded_at: float = 0.0
    keep_vectors: bool = False
    # Vectors being fetched after the load (see fill_vectors): writes keep
    # theirs meanwhile, but a search must not trust the rows yet.
    filling: bool = False
    # A server cache's view of other writers (see backends.cached): their
    # write stamps when loaded, and when they were last found unchanged.
    stamps: dict[str, int] | None = None
    checked_at: float = 0.0
    # Records with status cold: a recall's cold search of a namespace holding
    # none is skipped (see backends._by_ids.SearchByIds.holds_cold).
    cold: int = 0
    dense: DenseRows = field(default_factory=lambda: DenseRows())
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
    _length_array: np.ndarray | None = None  # _slot_lengths as floats, until a write
    _total_length: int = 0
    _text_bytes: int = 0
    _arrays: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # (event_time, id), oldest first: time-window reads walk only their window.
    _by_time: list[tuple[float, str]] = field(default_factory=list)

    def put(self, record: MemoryRecord) -> None:
        self.drop(record.id)
        slim = record.replace(dense=[], sparse={})
        self.records[record.id] = slim
        self.cold += slim.status is Status.COLD
        self._text_bytes += _text_size(slim)
        bisect.insort(self._by_time, (record.event_time, record.id))
        counts = Counter(lexical_terms(record_text(record)))
        length = sum(counts.values())
        self.lengths[record.id] = length
        self._total_length += length
        slot = self._slot(record.id)
        self._slot_lengths[slot] = length
        self._length_array = None
        if self.keep_vectors and record.dense:
            self.dense.put(slot, record.dense)
        for term, tf in counts.items():
            self.postings[term][record.id] = tf
            self._arrays.pop(term, None)

    def fill_vectors(self, rows: Sequence[MemoryRecord]) -> None:
        """Vectors fetched after the load, for the records still without one.

        A record written since the fetch began already holds its (newer)
        vector, and one changed or deleted meanwhile is skipped, so a fetch
        that raced writes leaves every vector current.
        """
        for r in rows:
            held = self.records.get(r.id)
            slot = self._slots.get(r.id)
            if held is None or slot is None or not r.dense or held.version != r.version:
                continue
            if slot < len(self.dense.live) and self.dense.live[slot]:
                continue
            self.dense.put(slot, r.dense)

    def vector(self, memory_id: str) -> list[float]:
        """The kept vector of ``memory_id`` (unit length), or [] where none is kept."""
        slot = self._slots.get(memory_id)
        if slot is None or slot >= len(self.dense.live) or not self.dense.live[slot]:
            return []
        found: list[float] = self.dense.matrix[slot].tolist()
        return found

    def _slot(self, memory_id: str) -> int:
        if memory_id not in self._slots:
            self._slots[memory_id] = len(self._ids)
            self._ids.append(memory_id)
            self._slot_lengths.append(0)
        return self._slots[memory_id]

    def drop(self, memory_id: str) -> None:
        if memory_id in self._slots:
            self.dense.clear(self._slots[memory_id])
        old = self.records.pop(memory_id, None)
        self._total_length -= self.lengths.pop(memory_id, 0)
        if old is not None:
            self.cold -= old.status is Status.COLD
            self._text_bytes -= _text_size(old)
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
        if self._length_array is None:
            self._length_array = np.asarray(self._slot_lengths, dtype=np.float64)
        lengths = self._length_array
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
        # Equal scores by what the records say (tie_order), not by random ids.
        hits.sort(key=lambda h: (-h[1], tie_order(h[0])))
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
        """Exact cosine neighbours among the kept vectors that pass ``where``.

        Ranks a shortlist first (``argpartition``); when the filter leaves
        fewer than ``limit`` of it, every live vector is ranked.
        """
        sims = self.dense.cosine(vector, len(self._ids))
        live = int(np.count_nonzero(sims > -np.inf))
        shortlist = min(live, max(limit * 8, 200))
        found = self._passing(sims, _best(sims, shortlist), where, limit)
        if len(found) < limit and shortlist < live:
            found = self._passing(sims, _best(sims, live), where, limit)
        return found

    def _passing(
        self, sims: np.ndarray, order: np.ndarray, where: Where, limit: int
    ) -> list[tuple[MemoryRecord, float]]:
        found: list[tuple[MemoryRecord, float]] = []
        for slot in order:
            record = self.records[self._ids[slot]]
            if where.matches(record):
                found.append((record, float(sims[slot])))
                if len(found) >= limit:
                    break
        return found

    def slack(self) -> float:
        """Share of slots no live record holds (rows a reload would reclaim)."""
        return 1.0 - len(self.records) / len(self._ids) if self._ids else 0.0

    def nbytes(self) -> int:
        """Estimated memory held: vectors, plus a per-record cost and its text."""
        return self.dense.nbytes() + len(self._ids) * RECORD_BYTES + self._text_bytes


def _text_size(record: MemoryRecord) -> int:
    # Content and summary dominate; str costs 1-4 bytes a character, call it 2.
    return 2 * (len(record.content) + len(record.summary))


def _best(sims: np.ndarray, n: int) -> np.ndarray:
    """Indices of the ``n`` highest ``sims``, best first (ties by slot)."""
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-sims, n - 1)[:n] if n < len(sims) else np.arange(len(sims))
    return top[np.lexsort((top, -sims[top]))]


class DenseRows:
    """Unit-length float32 vectors by slot, for exact cosine search in numpy.

    Row ``i`` holds slot ``i``'s vector, normalised on the way in so a dot
    product is the cosine Milvus computes; a mask marks rows holding one.
    Capacity doubles as a namespace grows, so a write copies one row rather
    than re-stacking the namespace, and a search is one matrix-vector product:
    about 4 ms for 10,000 vectors of 384 dimensions on one core.
    """

    def __init__(self) -> None:
        self.matrix = np.zeros((0, 0), dtype=np.float32)
        self.live = np.zeros(0, dtype=bool)

    def put(self, slot: int, vector: Sequence[float]) -> None:
        row = np.asarray(vector, dtype=np.float32)
        if self.matrix.shape[1] != row.shape[0]:
            if self.live.any():
                raise ValueError(
                    f"vector of dimension {row.shape[0]} in an index of "
                    f"dimension {self.matrix.shape[1]}"
                )
            self.matrix = np.zeros((0, row.shape[0]), dtype=np.float32)
            self.live = np.zeros(0, dtype=bool)
        self._reserve(slot + 1)
        norm = float(np.linalg.norm(row))
        self.matrix[slot] = row / norm if norm else 0.0
        self.live[slot] = bool(norm)

    def clear(self, slot: int) -> None:
        if slot < len(self.live):
            self.live[slot] = False

    def _reserve(self, rows: int) -> None:
        if rows <= len(self.live):
            return
        size = max(rows, 2 * len(self.live), 64)
        matrix = np.zeros((size, self.matrix.shape[1]), dtype=np.float32)
        matrix[: len(self.live)] = self.matrix
        live = np.zeros(size, dtype=bool)
        live[: len(self.live)] = self.live
        self.matrix, self.live = matrix, live

    def cosine(self, vector: Sequence[float], slots: int) -> np.ndarray:
        """Cosine of ``vector`` with rows ``0..slots-1``; ``-inf`` where none is kept."""
        rows = min(slots, len(self.live))
        out = np.full(slots, -np.inf, dtype=np.float32)
        query = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(query))
        if not rows or not norm or query.shape[0] != self.matrix.shape[1]:
            return out
        sims = self.matrix[:rows] @ (query / norm)
        out[:rows] = np.where(self.live[:rows], sims, -np.inf)
        return out

    def nbytes(self) -> int:
        return int(self.matrix.nbytes + self.live.nbytes)
