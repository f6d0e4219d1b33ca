"""The backend contract's search tests: dense (cosine) and lexical (BM25).

Part of :class:`~hindsight_lg.testing.backend_contract.BackendContract`.
"""

from __future__ import annotations

import numpy as np
import pytest

from hindsight_lg._text import terms
from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.model import Status
from hindsight_lg.testing._contract_data import put, rec


class SearchContract:
    """Dense and lexical search rank, filter, and return what they should."""

    def test_dense_search_ranks_the_nearest_first(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """The record whose vector is the query's comes first with cosine ~1."""
        texts = [
            "I love hiking in the mountains",
            "Redis caching is fine",
            "我喜欢喝绿茶",
        ]
        put(backend, namespace, *(rec(namespace, t) for t in texts))
        query = rec(namespace, "Redis caching is fine").dense
        hits = backend.search_dense(namespace, query, Where(), limit=3)
        assert "Redis caching is fine" == hits[0].record.content
        assert 1.0 == pytest.approx(hits[0].score, abs=1e-4)
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)

    def test_dense_search_with_vectors_returns_each_hits_vector(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """``vectors=True`` brings every hit's stored dense vector in the search."""
        stored = [rec(namespace, t) for t in ("Redis caching", "green tea", "hiking")]
        put(backend, namespace, *stored)
        query = stored[0].dense
        hits = backend.search_dense(namespace, query, Where(), limit=3, vectors=True)
        by_id = {r.id: r.dense for r in stored}
        assert sorted(by_id) == sorted(h.record.id for h in hits)
        for h in hits:
            np.testing.assert_allclose(h.record.dense, by_id[h.record.id], atol=1e-6)

    def test_dense_search_applies_the_filter(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Records the filter excludes are never returned, however similar."""
        put(
            backend,
            namespace,
            rec(namespace, "Redis caching", status=Status.SUPERSEDED),
            rec(namespace, "Postgres tuning"),
        )
        hits = backend.search_dense(
            namespace, rec(namespace, "Redis caching").dense, Where(), limit=5
        )
        assert ["Postgres tuning"] == [h.record.content for h in hits]

    def test_lexical_search_finds_records_sharing_terms(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """BM25 returns records containing the query terms, best first, scores >= 0."""
        put(
            backend,
            namespace,
            rec(namespace, "Redis is fine for caching now"),
            rec(namespace, "I went hiking with Lena"),
            rec(namespace, "Redis cluster migration done, Redis everywhere"),
        )
        hits = backend.search_lexical(namespace, terms("Redis"), Where(), limit=5)
        assert {
            "Redis is fine for caching now",
            "Redis cluster migration done, Redis everywhere",
        } == {h.record.content for h in hits}
        assert all(h.score > 0 for h in hits)

    def test_lexical_search_handles_chinese_terms(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Chinese bigrams are searchable terms."""
        put(
            backend,
            namespace,
            rec(namespace, "我下周三要去上海出差"),
            rec(namespace, "我喜欢喝绿茶"),
        )
        hits = backend.search_lexical(namespace, ["上海", "出差"], Where(), limit=5)
        assert ["我下周三要去上海出差"] == [h.record.content for h in hits]

    def test_lexical_search_applies_the_filter_and_empty_terms(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Filtered-out records and an empty term list give no lexical hits."""
        put(backend, namespace, rec(namespace, "Redis old", status=Status.SUPERSEDED))
        assert [] == backend.search_lexical(namespace, terms("Redis"), Where(), limit=5)
        assert [] == backend.search_lexical(namespace, [], Where(statuses=()), limit=5)
