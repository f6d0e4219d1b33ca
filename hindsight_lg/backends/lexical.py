"""BM25 over pre-tokenised terms, for backends without a native BM25 index."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

K1 = 1.2
B = 0.75


def idf(total: int, with_term: int) -> float:
    """BM25's inverse document frequency of a term found in ``with_term`` of ``total``."""
    return math.log(1 + (total - with_term + 0.5) / (with_term + 0.5))


def saturation(tf: Any, length: Any, avg_length: float) -> Any:
    """BM25's term-frequency factor, length-normalised.

    Works element-wise on numpy arrays as well as on floats, so the read
    cache's vectorised index and this module share one formula.
    """
    return tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg_length))


def bm25_scores(
    query: Sequence[str],
    docs: Iterable[tuple[str, Sequence[str]]],
) -> dict[str, float]:
    """BM25 of each ``(id, terms)`` doc against ``query``; zero scores are dropped.

    Document frequencies come from ``docs`` themselves, so callers pass the
    whole namespace (reference backend) or a candidate pool (fallback path).
    """
    corpus = [(doc_id, Counter(toks), len(toks)) for doc_id, toks in docs]
    if not corpus or not query:
        return {}
    avg_len = sum(n for _, _, n in corpus) / len(corpus) or 1.0
    qterms = list(dict.fromkeys(query))
    df = Counter(t for _, tf, _ in corpus for t in qterms if t in tf)
    total = len(corpus)
    weight = {t: idf(total, n) for t, n in df.items()}
    scores: dict[str, float] = {}
    for doc_id, tf, length in corpus:
        s = sum(
            weight[t] * saturation(tf[t], length, avg_len) for t in qterms if t in tf
        )
        if s > 0:
            scores[doc_id] = s
    return scores
