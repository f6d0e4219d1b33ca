"""Reranking the head of a recall with a cross-encoder, traced."""

from __future__ import annotations

from hindsight_lg import telemetry
from hindsight_lg.embeddings.base import Reranker
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.memory.recall.trace import rerank_inputs, rerank_outputs


def rerank(
    reranker: Reranker, query: str, ranked: list[Candidate], head_size: int
) -> list[Candidate]:
    """``ranked`` with its first ``head_size`` (at least 20) re-scored and re-sorted.

    A candidate's score becomes the mean of its recall score and the
    reranker's; the rest of the list keeps its order behind the head.
    """
    head = ranked[: max(20, head_size)]
    with telemetry.memory_span(
        telemetry.RERANK,
        kind=telemetry.RERANKER,
        count=len(head),
        **rerank_inputs(reranker.model_id, query, head),
    ) as span:
        scores = reranker.score(query, [c.record.content for c in head])
        for c, s in zip(head, scores, strict=True):
            c.paths["rerank"] = float(s)
            c.score = 0.5 * c.score + 0.5 * float(s)
        head.sort(key=lambda c: -c.score)
        telemetry.set_attributes(span, rerank_outputs(head))
    return head + ranked[len(head) :]
