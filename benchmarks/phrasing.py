"""Recall on questions put the way agents and tools put them, per phrasing.

``benchmarks/data/phrasing/frozen.json`` is held out (written before the
rules it measures were changed, by someone who had not seen them, never
tuned on); ``dev.json`` is the set to tune on. Each question is labelled with
its phrasing (first person, "the user", the person's name, an imperative, a
search tool's keywords) and the memories that bear on it. Per phrasing, at
recall's defaults: precision and recall over answerable questions, and for
questions nothing answers the share that inject nothing (clean) and the
lines injected.

    OMP_NUM_THREADS=1 python benchmarks/phrasing.py [--set frozen|dev|both]
        [--embedders default,minilm,...]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.bench.relevance import Figures, evaluate_by, load_set
from hindsight_lg.embeddings import default_embedder, embedder_from_name

DATA = Path(__file__).parent / "data" / "phrasing"
ORDER = (
    "first-person",
    "third-person-user",
    "third-person-name",
    "imperative",
    "tool-query",
)


def _row(name: str, figures: Figures) -> str:
    f = figures.summary()
    answerable, unanswerable = len(figures.recall), len(figures.unanswered_lines)
    return (
        f"| {name} | {answerable} | {f['precision']:.2f} | {f['recall']:.2f} "
        f"| {f['lines']:.1f} | {unanswerable} | {f['unanswered_clean']:.2f} "
        f"| {f['unanswered_lines']:.1f} |"
    )


def _total(parts: dict[str, Figures]) -> Figures:
    total = Figures()
    for f in parts.values():
        total.extend(f)
    return total


def main() -> None:
    """Print the phrasing table per set and embedder."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--set", default="frozen", choices=("frozen", "dev", "both"))
    p.add_argument("--embedders", default="default")
    args = p.parse_args()
    for name in args.embedders.split(","):
        embedder = default_embedder() if name == "default" else embedder_from_name(name)
        print(f"\nembedder: {embedder.model_id}")
        print(
            "| set / phrasing | answerable | precision | recall | lines "
            "| unanswerable | clean | lines |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for which in ("dev", "frozen") if args.set == "both" else (args.set,):
            memory = HindsightMemory(InMemoryBackend(), embedder)
            users = load_set(DATA / f"{which}.json")
            parts = evaluate_by(users, memory, lambda q: q.phrasing)
            memory.close()
            print(_row(f"**{which}**", _total(parts)))
            for phrasing in [*ORDER, *sorted(set(parts) - set(ORDER))]:
                if phrasing in parts:
                    print(_row(f"{which} {phrasing}", parts[phrasing]))


if __name__ == "__main__":
    main()
