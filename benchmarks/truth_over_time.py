"""Changes of mind between speakers, end to end: supersede precision/recall, current first.

``benchmarks/data/changes/frozen.jsonl`` is held out: written before the rules it
measures were changed, by someone who had not seen them, and never tuned on.
``dev.jsonl`` is the set to tune on. Each pair is captured into a fresh engine with its
speakers, some days apart, and its question recalled at recall's defaults
(:mod:`hindsight_lg.bench.truth`).

    OMP_NUM_THREADS=1 python benchmarks/truth_over_time.py [--set frozen|dev|both]
        [--embedder default|minilm|hashing|...] [--show-misses] [--pair-cosines]

``--pair-cosines`` prints, per label, how close the embedder puts the two
statements of a pair (quartiles of their cosine). It is why write-time
detection without an LLM stays with frames and slots: if replacements stood
apart from additions and asides, a floor on this cosine would find them.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_lg import HindsightMemory
from hindsight_lg.bench.changes import SUPERSEDE, coarse
from hindsight_lg.bench.truth import SpokenPair, load_spoken, play_all, report
from hindsight_lg.embeddings import default_embedder, embedder_from_name
from hindsight_lg.testing import FrozenClock, InMemoryBackend

DATA = Path(__file__).parent / "data" / "changes"


def _row(name: str, pairs: list[SpokenPair], outcomes: list[Any]) -> str:
    r = report(pairs, outcomes)
    s = r.supersede
    return (
        f"| {name} | {len(pairs)} | {s.precision:.1%} | {s.recall:.1%} "
        f"| {s.predicted}/{s.support} | {r.current_first:.1%} ({r.judged}) |"
    )


def _misses(pairs: list[SpokenPair], outcomes: list[Any]) -> None:
    for p, o in zip(pairs, outcomes, strict=True):
        wrong = (coarse(p.label) == SUPERSEDE) != o.superseded
        if wrong or o.current_first is False:
            what = "superseded" if o.superseded else "kept"
            print(
                f"    {p.id} {p.category} {p.label}: {what}, returned {list(o.returned)}"
                f" | {p.old.speaker}: {p.old.text} -> {p.new.speaker}: {p.new.text}"
                f" | ? {p.question}",
                file=sys.stderr,
            )


def _pair_cosines(which: str, pairs: list[SpokenPair], embedder: Any) -> None:
    texts = [t for p in pairs for t in (p.old.text, p.new.text)]
    v = np.asarray(embedder.embed(texts), dtype=float)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    by: dict[str, list[float]] = defaultdict(list)
    for i, p in enumerate(pairs):
        by[p.label].append(float(v[2 * i] @ v[2 * i + 1]))
    for label, cos in sorted(by.items()):
        q = np.percentile(cos, [25, 50, 75])
        print(
            f"| {which} | {label} | {len(cos)} | {q[0]:.2f} | {q[1]:.2f} | {q[2]:.2f} |"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="frozen", choices=("frozen", "dev", "both"))
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--pair-cosines", action="store_true")
    args = parser.parse_args()
    name = args.embedder
    embedder = default_embedder() if name == "default" else embedder_from_name(name)

    def make() -> HindsightMemory:
        return HindsightMemory(InMemoryBackend(), embedder, clock=FrozenClock())

    print(f"embedder: {embedder.model_id}")
    sets = ("dev", "frozen") if args.set == "both" else (args.set,)
    if args.pair_cosines:
        print(
            "| set | label | pairs | cosine q1 | median | q3 |\n|---|---|---|---|---|---|"
        )
        for which in sets:
            _pair_cosines(which, load_spoken(DATA / f"{which}.jsonl"), embedder)
        return 0
    print(
        "| set | pairs | supersede precision | recall | said/should | current first |"
    )
    print("|---|---|---|---|---|---|")
    for which in sets:
        pairs = load_spoken(DATA / f"{which}.jsonl")
        started = time.perf_counter()
        outcomes = play_all(pairs, make)
        by: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(pairs):
            by[p.lang].append(i)
        print(_row(which, pairs, outcomes))
        for lang, idx in sorted(by.items()):
            sub = [pairs[i] for i in idx]
            print(_row(f"{which} {lang}", sub, [outcomes[i] for i in idx]))
        if args.show_misses:
            _misses(pairs, outcomes)
        print(f"{which}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
