"""Scoring changes of mind on a labelled corpus of statement pairs.

Each pair is an earlier statement, a later one, and what the later one should
do to the earlier: ``replace``, ``correct``, ``add``, ``reinforce`` or
``ignore``. Two measures:

- :func:`judge_outcomes`: the decision of the slot judge alone;
- :func:`capture_outcomes`: the end-to-end effect of two captures on a fresh
  engine (the earlier memory superseded, merged into, or left as it was),
  which any version of the engine can be measured on.

Replace and correct both *supersede*: that class's precision and recall is the
headline figure (a false positive loses a true memory, a false negative keeps
a stale one current).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SUPERSEDE = "supersede"
LABELS = ("replace", "correct", "add", "reinforce", "ignore")


@dataclass(frozen=True, slots=True)
class Pair:
    """One labelled pair of the corpus."""

    split: str
    lang: str
    category: str
    label: str
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class Score:
    """Precision and recall of one class over a set of pairs."""

    label: str
    precision: float
    recall: float
    support: int
    predicted: int = 0


def load_pairs(path: str | Path, split: str | None = None) -> list[Pair]:
    """The corpus at ``path`` (JSON lines), optionally one split (tune, held)."""
    rows = [json.loads(line) for line in Path(path).read_text("utf-8").splitlines()]
    pairs = [Pair(**row) for row in rows if row]
    return [p for p in pairs if split is None or p.split == split]


def coarse(label: str) -> str:
    """``supersede`` for replace and correct, the label otherwise."""
    return SUPERSEDE if label in ("replace", "correct") else label


def score(gold: Sequence[str], predicted: Sequence[str], label: str) -> Score:
    """Precision and recall of ``label`` (1.0 when there is nothing to be wrong on)."""
    hits = sum(g == p == label for g, p in zip(gold, predicted, strict=True))
    said = sum(p == label for p in predicted)
    true = sum(g == label for g in gold)
    precision = hits / said if said else 1.0
    return Score(label, precision, hits / true if true else 1.0, true, said)


def judge_outcomes(
    pairs: Iterable[Pair], judge: Callable[[str, str], str]
) -> list[str]:
    """``judge(new, old)`` for every pair, as labels."""
    return [str(judge(p.new, p.old)) for p in pairs]


def capture_outcomes(
    pairs: Iterable[Pair], make_memory: Callable[[], Any]
) -> list[str]:
    """Capture each pair's statements ten days apart: supersede, reinforce or keep.

    ``make_memory()`` returns a fresh engine whose ``clock`` can ``advance``
    (``hindsight_lg.testing.FrozenClock``).
    """
    out = []
    for i, pair in enumerate(pairs):
        memory = make_memory()
        ns = f"pair{i}"
        old_ids = {r.id for r in memory.capture(pair.old, namespace=ns, speaker="user")}
        memory.clock.advance(days=10)
        new_ids = {r.id for r in memory.capture(pair.new, namespace=ns, speaker="user")}
        history = memory.list_memories(ns, history=True)
        stale = [r for r in history if r.id in old_ids and r.status == "superseded"]
        if stale:
            out.append(SUPERSEDE)
        elif old_ids & new_ids:
            out.append("reinforce")
        else:
            out.append("keep")
        memory.close()
    return out
