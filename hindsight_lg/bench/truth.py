"""Changes of mind between speakers, measured end to end: supersede and read order.

A corpus line is two statements, each with its speaker, some days apart, a
question asked after both, and which statement answers it then (``new``,
``old`` or ``both``); its label says what the later statement should do to
the earlier one (replace, correct, add, reinforce, ignore). Each pair is told
to a fresh engine through ``capture`` (the speaker's name as ``speaker``),
then the question is recalled at recall's defaults. Per pair:

- **superseded**: whether the earlier memory stopped being current;
- **current first**: for a pair with one true answer, whether recall returns
  the statement that answers now, ahead of the other one when that is
  returned too and not marked as earlier (a change kept in order at read time
  counts, as the design allows either).

Replace and correct should supersede; the others should not.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hindsight_lg.bench.changes import SUPERSEDE, Score, coarse, score

DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Statement:
    """One side of a pair: who said what."""

    speaker: str
    text: str


@dataclass(frozen=True, slots=True)
class SpokenPair:
    """One labelled pair of the speaker corpus."""

    id: str
    lang: str
    category: str
    label: str
    old: Statement
    new: Statement
    days_apart: int
    question: str
    answer: str  # "new", "old" or "both"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the engine did with one pair."""

    superseded: bool
    current_first: bool | None  # None where both statements answer
    returned: tuple[str, ...]  # "old"/"new" in the order recall returned them


def load_spoken(path: str | Path) -> list[SpokenPair]:
    """The speaker corpus at ``path`` (JSON lines)."""
    out = []
    for line in Path(path).read_text("utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        row["old"], row["new"] = Statement(**row["old"]), Statement(**row["new"])
        out.append(SpokenPair(**row))
    return out


def play(pair: SpokenPair, memory: Any, namespace: str = "pair") -> Outcome:
    """Tell ``pair`` to ``memory`` (its clock can ``advance``), ask, and score it."""
    old_ids = _tell(memory, pair.old, namespace)
    memory.clock.advance(days=max(pair.days_apart, 0), seconds=60)
    new_ids = _tell(memory, pair.new, namespace) - old_ids
    history = memory.list_memories(namespace, history=True)
    superseded = any(r.id in old_ids and r.status == "superseded" for r in history)
    memory.clock.advance(days=1)
    result = memory.recall(pair.question, namespace=namespace, timeout=None)
    returned = []
    for m in result.memories:
        side = (
            "old" if m.record.id in old_ids else "new" if m.record.id in new_ids else ""
        )
        if side and side not in returned and not _marked_earlier(m):
            returned.append(side)
    return Outcome(superseded, _first(pair.answer, returned), tuple(returned))


def _tell(memory: Any, said: Statement, namespace: str) -> set[str]:
    records = memory.capture(said.text, namespace=namespace, speaker=said.speaker)
    return {r.id for r in records}


def _marked_earlier(item: Any) -> bool:
    """Whether recall shows this memory as an earlier statement of a newer one."""
    return bool(item.earlier)


def _first(answer: str, returned: Sequence[str]) -> bool | None:
    if answer == "both":
        return None
    return bool(returned) and returned[0] == answer


def play_all(
    pairs: Iterable[SpokenPair], make_memory: Callable[[], Any]
) -> list[Outcome]:
    """:func:`play` every pair on a fresh engine from ``make_memory()``."""
    out = []
    for pair in pairs:
        memory = make_memory()
        try:
            out.append(play(pair, memory))
        finally:
            memory.close()
    return out


@dataclass(frozen=True, slots=True)
class Report:
    """The headline figures over a set of pairs."""

    supersede: Score
    current_first: float
    judged: int  # pairs with one true answer


def report(pairs: Sequence[SpokenPair], outcomes: Sequence[Outcome]) -> Report:
    """Supersede precision/recall and the current-first rate."""
    gold = [coarse(p.label) for p in pairs]
    said = [SUPERSEDE if o.superseded else "keep" for o in outcomes]
    firsts = [o.current_first for o in outcomes if o.current_first is not None]
    rate = sum(firsts) / len(firsts) if firsts else 1.0
    return Report(score(gold, said, SUPERSEDE), rate, len(firsts))
