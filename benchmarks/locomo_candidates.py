"""Where LoCoMo evidence sits in recall: returned, among the candidates, or nowhere.

For each question with evidence, recall runs at its defaults with
``explain=True``; the explanation lists every candidate recall ranked. The
script reports, per category, the evidence recall of what was returned, of all
candidates, and of a perfect reranker: the same candidates re-assembled by
``assemble`` with those drawn from an evidence turn first, in the same budget.
The gap between the first and the last is what a reranker could close; what
the candidates lack needs other means (query or memory rewriting).

OMP_NUM_THREADS=1 python benchmarks/locomo_candidates.py \\
    --data ../shared/data/locomo/locomo10.json --conversations 5-9 --budget 500
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.bench._cache import CachedEmbedder
from hindsight_lg.bench.evaluate import evidence_recall
from hindsight_lg.bench.locomo import (
    CATEGORIES,
    Question,
    load_locomo,
    parse_range,
    replay,
)
from hindsight_lg.embeddings import embedder_from_name
from hindsight_lg.memory.recall.assembly import assemble
from hindsight_lg.memory.recall.result import Candidate


def sources(items: Any) -> list[str]:
    """Source turn ids of memories or candidates."""
    return [s for m in items for s in m.record.source_ids]


def measure(memory: HindsightMemory, q: Question, budget: int) -> tuple[float, ...]:
    """Evidence recall returned, among all candidates, and with a perfect reranker."""
    result = memory.recall(
        q.text, namespace="c", budget_tokens=budget, explain=True, timeout=None
    )
    assert result.explanation is not None
    records = {r.id: r for r in memory.backend.get("c", list(result.explanation))}
    pool = [
        Candidate(records[i], score=e["score"])
        for i, e in result.explanation.items()
        if i in records
    ]
    evidence = set(q.evidence)
    best = sorted(
        pool, key=lambda c: (not set(c.record.source_ids) & evidence, -c.score)
    )
    for rank, c in enumerate(best):
        c.score = 1.0 - rank / (len(best) + 1)
    perfect, _, _ = assemble(best, budget, None, memory.policy)
    return (
        evidence_recall(q.evidence, sources(result.memories)),
        evidence_recall(q.evidence, sources(pool)),
        evidence_recall(q.evidence, sources(perfect)),
    )


def main() -> None:
    """Replay each conversation, measure every question with evidence, print a table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="../shared/data/locomo/locomo10.json")
    p.add_argument("--conversations", default="5-9")
    p.add_argument("--budget", type=int, default=500)
    p.add_argument("--cache", default="bench-out/cache", help="embedding cache folder")
    args = p.parse_args()
    embedder = CachedEmbedder(embedder_from_name("minilm"), Path(args.cache))
    rows: list[tuple[int, tuple[float, ...]]] = []
    for conv in load_locomo(args.data, parse_range(args.conversations)):
        memory = HindsightMemory(InMemoryBackend(), embedder)
        replay(memory, conv, "c")
        embedder.save()
        rows += [
            (q.category, measure(memory, q, args.budget))
            for q in conv.questions
            if q.evidence
        ]
        memory.close()
    print("| category | questions | returned | among candidates | perfect reranker |")
    print("|---|---|---|---|---|")
    for cat, name in [*CATEGORIES.items(), (0, "overall")]:
        mine = [v for c, v in rows if cat in (0, c)]
        cells = [f"{100 * statistics.fmean(v[i] for v in mine):.1f}" for i in range(3)]
        print(f"| {name} | {len(mine)} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
