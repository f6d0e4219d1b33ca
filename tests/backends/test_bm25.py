"""One BM25: the read cache's vectorised index and the pool scorer agree."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg._text import terms
from hindsight_lg.backends._index import NamespaceIndex, record_text
from hindsight_lg.backends.lexical import bm25_scores
from hindsight_lg.model import MemoryRecord

WORDS = ["tea", "coffee", "redis", "cache", "trip", "kyoto", "green", "plan"]


@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=12), min_size=1),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=4),
)
def test_index_and_pool_scorer_give_the_same_scores(
    docs: list[list[str]], query: list[str]
) -> None:
    """Same corpus, same query: the same BM25 score for every document."""
    index = NamespaceIndex()
    records = [MemoryRecord(namespace="u", content=" ".join(d)) for d in docs]
    for record in records:
        index.put(record)
    q = terms(" ".join(query))
    pool = bm25_scores(q, ((r.id, terms(record_text(r))) for r in records))
    cached = index.bm25(q)
    assert set(cached) == set(pool)
    for doc_id, value in pool.items():
        assert cached[doc_id] == pytest.approx(value, rel=1e-9)
