"""Span attributes of a recall: what each path found and why each memory won.

Kept apart from the recall paths so the search code reads as search code.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.memory.recall.result import Candidate, RecallResult
from hindsight_lg.model import Status

_MAX_OUTPUT = 4000  # characters of the rendered block on the span


def annotate_recall(span: Any, result: RecallResult) -> None:
    """Set the recall span's result attributes.

    Ids, scores, budget used and cold wakes as ``hindsight.*``; the memories as
    OpenInference ``retrieval.documents.*`` whose metadata holds the part each
    path played (its normalised score per path), so "why this memory?" is
    answered in place; the rendered block as ``output.value``.
    """
    if not span.is_recording():
        return  # no tracer records it: skip building the documents and the block
    memories = result.memories
    span.set_attribute("hindsight.count", len(memories))
    span.set_attribute("hindsight.memory_ids", result.ids)
    span.set_attribute("hindsight.scores", [m.score for m in memories])
    span.set_attribute("hindsight.used_tokens", result.used_tokens)
    span.set_attribute("hindsight.timed_out", result.timed_out)
    span.set_attribute("hindsight.asked", result.asked)
    woken = [m.id for m in memories if m.record.status is Status.COLD]
    span.set_attribute("hindsight.cold_wakes", woken)
    for path, n in _per_path(m.paths for m in memories).items():
        span.set_attribute(f"hindsight.selected_by.{path}", n)
    docs = [
        {
            "id": m.id,
            "score": m.score,
            "content": m.record.content,
            "metadata": {
                "paths": {p: round(v, 4) for p, v in m.paths.items()},
                "score_formula": m.breakdown.formula() if m.breakdown else "",
                "kind": m.record.kind.value,
                "status": m.record.status.value,
                "full": m.full,
            },
        }
        for m in memories
    ]
    telemetry.set_attributes(
        span, telemetry.document_attributes("retrieval.documents", docs)
    )
    if memories:
        span.set_attribute("output.value", result.to_prompt()[:_MAX_OUTPUT])
        span.set_attribute("output.mime_type", "text/plain")


def annotate_pool(pool: dict[str, Candidate]) -> None:
    """Put the number of candidates each path found on the current (recall) span."""
    span = telemetry.current_span()
    if not span.is_recording():
        return
    span.set_attribute("hindsight.candidates", len(pool))
    for path, n in _per_path(c.paths for c in pool.values()).items():
        span.set_attribute(f"hindsight.candidates.{path}", n)


def rerank_inputs(model: str, query: str, head: list[Candidate]) -> dict[str, Any]:
    """OpenInference reranker attributes known before scoring."""
    return {
        "reranker.model_name": model,
        "reranker.query": query,
        "reranker.top_k": len(head),
        **telemetry.document_attributes(
            "reranker.input_documents", [_doc(c) for c in head]
        ),
    }


def rerank_outputs(head: list[Candidate]) -> dict[str, Any]:
    """OpenInference reranker output documents, in their new order."""
    return telemetry.document_attributes(
        "reranker.output_documents", [_doc(c) for c in head]
    )


def _doc(c: Candidate) -> dict[str, Any]:
    return {"id": c.record.id, "score": c.score, "content": c.record.content}


def _per_path(paths: Iterable[dict[str, float]]) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for entry in paths:
        for path in entry:
            counts[path] += 1
    return dict(counts)
