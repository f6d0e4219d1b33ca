"""Recall's scoring: how the paths' scores make one score, and its breakdown.

A candidate's similarity is the weighted mean of its paths' normalised scores
(dense, lexical, entity, time, speaker, ...); recency decays with the
memory's age; the graph adds what spreads from the seeds. :func:`score`
folds them with the policy's weights, the relevance gate, confidence and the
wake factor; :func:`final_breakdown` spells it out for a memory shown or
explained.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from hindsight_lg.backends.base import tie_order
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.breakdown import Breakdown
from hindsight_lg.memory.recall.wake import boosted
from hindsight_lg.model import MemoryRecord

if TYPE_CHECKING:
    from hindsight_lg.memory.recall.result import Candidate

_DAY = 86400.0


def recency(record: MemoryRecord, now: float) -> float:
    """0.5 ** (age / half_life), age from the memory's last event or access."""
    last = max(record.event_time, record.last_accessed_at)
    age_days = max(0.0, now - last) / _DAY
    return float(0.5 ** (age_days / max(record.half_life_days, 1e-6)))


def similarity_weights(policy: Policy) -> tuple[tuple[str, float], ...]:
    """Each similarity path's weight in :func:`similarity`, from ``policy``."""
    w = policy.probe_weights
    return (
        ("dense", 1.0),
        ("lexical", w.get("text", 0.5) + 0.4),
        ("entity", w.get("entity", 1.0) * 0.8),
        ("time", w.get("time", 0.8) * 0.5),
        ("emotion", w.get("emotion", 0.6) * 0.5),
        ("feedback", w.get("feedback", 0.7)),
        ("speaker", w.get("speaker", 0.3)),
        ("hop", w.get("hop", 0.3)),
    )


def similarity(
    paths: Mapping[str, float],
    policy: Policy,
    weights: Sequence[tuple[str, float]] | None = None,
) -> float:
    """Noisy-or of the similarity paths: agreement between paths raises it.

    ``weights`` are :func:`similarity_weights` of ``policy``, for a caller
    scoring a whole pool (worked out once, not per memory).
    """
    miss = 1.0
    for name, weight in weights or similarity_weights(policy):
        value = paths.get(name)
        if value:
            miss *= 1.0 - min(1.0, weight * value)
    return 1.0 - miss


def fuse_ranks(pool: Sequence[Candidate], policy: Policy) -> None:
    """Reciprocal rank fusion of the similarity paths into ``Candidate.fused``.

    Path scores live on different scales (cosine, BM25 normalised by its best
    hit, entity overlap); ranks do not. Each path adds ``weight / (k + rank)``,
    so memories that several paths agree on rise, as in hybrid search. The
    result is scaled so the best memory of the pool has similarity 1.
    """
    fused = dict.fromkeys(range(len(pool)), 0.0)
    for path, weight in policy.fusion_weights.items():
        found = [i for i, c in enumerate(pool) if c.paths.get(path, 0.0) > 0]
        found.sort(key=lambda i: -pool[i].paths[path])
        for rank, i in enumerate(found, 1):
            fused[i] += weight / (policy.rrf_k + rank)
    top = max(fused.values(), default=0.0)
    for i, c in enumerate(pool):
        c.fused = fused[i] / top if top > 0 else 0.0


def score(
    c: Candidate,
    policy: Policy,
    now: float,
    weights: Sequence[tuple[str, float]] | None = None,
) -> float:
    """The design's formula: 0.4 sim + 0.2 recency + 0.25 importance + 0.15 graph.

    ``weights``: :func:`similarity_weights` of ``policy``, when scoring a pool.
    """
    w = policy.score_weights
    if c.fused is not None:
        c.similarity = c.fused
    else:
        c.similarity = similarity(c.paths, policy, weights)
    c.recency = max(recency(c.record, now), c.paths.get("recency", 0.0))
    c.graph = c.paths.get("graph", 0.0)
    relevance = w["similarity"] * c.similarity + w["graph"] * c.graph
    prior = w["recency"] * c.recency + w["importance"] * c.record.importance
    # Recency and importance modulate relevance, they never create it: at full
    # relevance this is the design's sum, and an important or fresh memory
    # that shares nothing with the query cannot outrank one that answers it.
    reach = w["similarity"] + w["graph"]
    value = relevance + prior * (relevance / reach if reach > 0 else 1.0)
    gate = relevance / reach if reach > 0 else 1.0
    confidence = 0.5 + 0.5 * c.record.confidence
    value *= confidence
    c.score, c.rank = value, value
    if c.woken:
        c.score, c.rank = boosted(value, policy.cold_wake_boost)
    # The factor the cap left, so the breakdown's product is the shown score.
    wake = c.score / value if c.woken and value > 0 else 1.0
    c.weights, c.factors = w, (gate, confidence, wake)
    return c.score


def rank_order(c: Candidate) -> tuple[float, float, tuple[object, ...]]:
    """Best first (a woken memory by its boost, uncapped); ties newest first,
    then by what the memories say (:func:`~hindsight_lg.backends.base.tie_order`),
    never by their random ids alone: two stores fed the same turns rank alike.
    """
    return (-c.rank, -c.record.event_time, tie_order(c.record))


def final_breakdown(c: Candidate) -> Breakdown | None:
    """How ``c``'s score was made, with its final score (after any rerank) and
    paths; ``None`` before :func:`score` ran."""
    if c.factors is None or c.weights is None:
        return None
    gate, confidence, wake = c.factors
    return Breakdown(
        {
            "similarity": c.similarity,
            "recency": c.recency,
            "importance": c.record.importance,
            "graph": c.graph,
        },
        dict(c.weights),
        {"gate": gate, "confidence": confidence, "wake": wake},
        score=c.score,
        rerank=c.paths.get("rerank"),
        support=c.support,
        paths={k: v for k, v in c.paths.items() if k != "rerank"},
    )


def explanation(pool: Iterable[Candidate]) -> dict[str, dict[str, float]]:
    """Per memory id, every name of its breakdown (:mod:`.breakdown`) and value.

    Candidates filtered out before scoring (inactive, unconfirmed lessons)
    are left out: they were never ranked.
    """
    out: dict[str, dict[str, float]] = {}
    for c in pool:
        b = final_breakdown(c)
        if b is not None:
            out[c.record.id] = b.flat()
    return out


def normalise(scores: Mapping[str, float], floor: float = 0.0) -> dict[str, float]:
    """Scale a path's raw scores into [0, 1] by its best score (or ``floor``).

    The floor keeps a path whose best match is weak (only common words
    matched) from being stretched to look like a perfect match.
    """
    if not scores:
        return {}
    top = max(max(scores.values()), floor)
    if top <= 0:
        return {}
    return {k: max(0.0, v) / top for k, v in scores.items()}
