"""Changes of mind on the labelled corpus: precision and recall per half.

The corpus (``tests/memory/data/changes_of_mind.jsonl``) holds English and
Chinese statement pairs, each labelled replace / correct / add / reinforce /
ignore, split into a ``tune`` half (the rules were adjusted on it) and a
``held`` half (never looked at while tuning).

Two measures per half:

- **capture**: two real captures ten days apart on a fresh engine (hashing
  embedder, in-memory store); was the earlier memory superseded (replace and
  correct should), merged into (a restatement should), or kept? This runs on
  any version of the engine, so it gives the before/after comparison.
- **judge**: the slot judge's own decision, all five labels (needs the judge).

Run: ``python benchmarks/changes_of_mind.py [--split tune|held|both] [--minilm]``
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.bench.changes import (
    LABELS,
    SUPERSEDE,
    Pair,
    capture_outcomes,
    coarse,
    judge_outcomes,
    load_pairs,
    score,
)
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

CORPUS = (
    Path(__file__).parent.parent / "tests" / "memory" / "data" / "changes_of_mind.jsonl"
)


def _engine(embedder: Any) -> Any:
    def make() -> HindsightMemory:
        return HindsightMemory(InMemoryBackend(), embedder, clock=FrozenClock())

    return make


def _capture_report(pairs: list[Pair], embedder: Any) -> None:
    got = capture_outcomes(pairs, _engine(embedder))
    gold = [coarse(p.label) for p in pairs]
    for label in (SUPERSEDE, "reinforce"):
        s = score(gold, got, label)
        print(
            f"  capture  {label:<10} precision {s.precision:6.1%}  recall {s.recall:6.1%}  (n={s.support}, said {s.predicted})"
        )
    wrong = [
        (p, g)
        for p, g in zip(pairs, got, strict=True)
        if (coarse(p.label) == SUPERSEDE) != (g == SUPERSEDE)
    ]
    for p, g in wrong[:8]:
        print(f"    miss: {p.label:>9} got {g:<9} | {p.old} -> {p.new}")


def _judge_report(pairs: list[Pair]) -> None:
    try:
        from hindsight_lg.memory.language.judge import judge_texts
    except ImportError:
        print("  judge    (this version has no slot judge)")
        return
    got = judge_outcomes(pairs, judge_texts)
    gold = [p.label for p in pairs]
    for label in LABELS:
        s = score(gold, got, label)
        print(
            f"  judge    {label:<10} precision {s.precision:6.1%}  recall {s.recall:6.1%}  (n={s.support}, said {s.predicted})"
        )
    s = score([coarse(g) for g in gold], [coarse(g) for g in got], SUPERSEDE)
    print(
        f"  judge    {SUPERSEDE:<10} precision {s.precision:6.1%}  recall {s.recall:6.1%}  (n={s.support}, said {s.predicted})"
    )
    accuracy = sum(g == p for g, p in zip(gold, got, strict=True)) / len(gold)
    print(f"  judge    exact label accuracy {accuracy:6.1%}")


def main() -> None:
    """Print the figures for the chosen halves."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", choices=["tune", "held", "both"], default="both")
    parser.add_argument(
        "--minilm", action="store_true", help="MiniLM instead of hashing"
    )
    parser.add_argument("--corpus", default=str(CORPUS))
    args = parser.parse_args()
    if args.minilm:
        from hindsight_lg.embeddings import default_embedder

        embedder: Any = default_embedder()
    else:
        embedder = HashingEmbedder()
    halves = ["tune", "held"] if args.split == "both" else [args.split]
    for half in halves:
        pairs = load_pairs(args.corpus, half)
        print(f"{half} half: {len(pairs)} pairs")
        _capture_report(pairs, embedder)
        _judge_report(pairs)


if __name__ == "__main__":
    main()
