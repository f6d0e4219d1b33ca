"""Chinese beside English: the bilingual set, told in each language, asked back in other words.

``benchmarks/data/bilingual/frozen.json`` (four users, 96 facts) is held out: it was
written before any rule was tuned, by someone who had not seen the rules, and nothing is
tuned on it. ``dev.json`` (one user, 20 facts) is the set to tune on.

Each user is captured twice, into two namespaces: every turn of the Chinese version, and
every turn of its English twin, in order, on the day it was said (one thread per day,
the turn's id in ``source_ids``). Then every question is recalled at recall's defaults
(``recall(question, namespace=..., timeout=None)``) on the day it is asked. Per language:

* *top 3*: answerable questions whose answer turn(s) are all among the first three
  memories returned;
* *found*: ... among everything returned;
* *nothing*: answerable questions for which recall returned nothing;
* *lines*: memory lines injected per answerable question;
* *clean*: questions nothing answers for which no block is injected, and their lines.

Code-switched questions are asked of the Chinese and of the English namespace and
reported as their own rows.

    OMP_NUM_THREADS=2 python benchmarks/bilingual.py [--set frozen|dev|both]
        [--embedders default,minilm,e5,minilm+e5,hashing] [--show-misses]
        [--false-rate 0.01]

``--false-rate`` sets ``Policy.relevance_false_rate`` (the share of unrelated
memories the relevance rule lets through on similarity alone; 1% by default): a
labelled variant, trading questions that recall nothing for lines injected when
nothing answers.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.embeddings import default_embedder, embedder_from_name
from hindsight_lg.memory.policy import Policy

DATA = Path(__file__).parent / "data" / "bilingual"
DAY = 86_400.0
START = 1_767_225_600.0  # 2026-01-01


class Clock:
    """The engine's clock, set to when each turn is said or question asked."""

    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


@dataclass(slots=True)
class Row:
    """One language's (or question kind's) figures."""

    top3: list[bool] = field(default_factory=list)
    found: list[bool] = field(default_factory=list)
    nothing: list[bool] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    clean: list[bool] = field(default_factory=list)
    unanswered_lines: list[int] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def cells(self) -> list[str]:
        n = len(self.top3)
        return [
            f"{sum(self.top3)}/{n} ({_pct(self.top3)})",
            f"{sum(self.found)}/{n}",
            f"{sum(self.nothing)}",
            f"{_mean(self.lines):.1f}",
            f"{sum(self.clean)}/{len(self.clean)}" if self.clean else "-",
            f"{_mean(self.unanswered_lines):.1f}" if self.clean else "-",
        ]


def _pct(flags: Sequence[bool]) -> str:
    return f"{100 * sum(flags) / len(flags):.0f}%" if flags else "-"


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def capture_user(memory: Any, clock: Clock, user: dict[str, Any], lang: str) -> str:
    """Capture one language version of a user; its namespace."""
    namespace = f"{user['name']}-{lang}"
    for i, turn in enumerate(user["turns"]):
        clock.now = START + turn["day"] * DAY + i * 60
        memory.capture(
            turn[lang],
            namespace=namespace,
            thread_id=f"{namespace}-day{turn['day']}",
            speaker="user",
            source_ids=[turn["id"]],
        )
    memory.flush()
    return namespace


def ask(
    memory: Any, clock: Clock, namespace: str, q: dict[str, Any], text: str, row: Row
) -> None:
    """Recall ``text`` at defaults on the question's day and score it into ``row``."""
    clock.now = START + q["day"] * DAY
    result = memory.recall(text, namespace=namespace, timeout=None)
    turns = [set(m.record.source_ids or ()) for m in result.memories]
    if not q["answers"]:
        row.clean.append(not result.to_prompt())
        row.unanswered_lines.append(len(turns))
        return
    want = set(q["answers"])
    top = set().union(*turns[:3]) if turns else set()
    every = set().union(*turns) if turns else set()
    row.top3.append(want <= top)
    row.found.append(want <= every)
    row.nothing.append(not turns)
    row.lines.append(len(turns))
    if not want <= top:
        row.misses.append(
            f"{text}  (wants {sorted(want)}, got {[sorted(t) for t in turns[:3]]})"
        )


def run(
    users: list[dict[str, Any]], embedder: Any, policy: Policy | None = None
) -> dict[str, Row]:
    """Every user in both languages; rows per language and per code-switched store."""
    rows = {k: Row() for k in ("zh", "en", "mixed→zh", "mixed→en")}
    for user in users:
        for lang in ("zh", "en"):
            clock = Clock()
            memory = HindsightMemory(
                InMemoryBackend(), embedder, clock=clock, policy=policy
            )
            try:
                namespace = capture_user(memory, clock, user, lang)
                for q in user["questions"]:
                    if q["kind"] == "code-switched":
                        ask(
                            memory,
                            clock,
                            namespace,
                            q,
                            q["text"],
                            rows[f"mixed→{lang}"],
                        )
                    else:
                        ask(memory, clock, namespace, q, q[lang], rows[lang])
            finally:
                memory.close()
    return rows


def build(name: str) -> Any:
    return default_embedder() if name == "default" else embedder_from_name(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="frozen", choices=("frozen", "dev", "both"))
    parser.add_argument("--embedders", default="default")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument("--false-rate", type=float, default=None)
    args = parser.parse_args()
    policy = (
        None
        if args.false_rate is None
        else Policy(relevance_false_rate=args.false_rate)
    )
    sets = ("dev", "frozen") if args.set == "both" else (args.set,)
    print(
        "| set | embedder | questions | top 3 | found | nothing | lines | clean | lines (no answer) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for name in args.embedders.split(","):
        embedder = build(name)
        for which in sets:
            users = json.loads((DATA / f"{which}.json").read_text(encoding="utf-8"))[
                "users"
            ]
            started = time.perf_counter()
            rows = run(users, embedder, policy)
            took = time.perf_counter() - started
            for kind, row in rows.items():
                cells = " | ".join(row.cells())
                print(
                    f"| {which} | {name} ({embedder.model_id[:40]}) | {kind} | {cells} |"
                )
                if args.show_misses:
                    for miss in row.misses:
                        print(f"    miss: {miss}", file=sys.stderr)
            print(f"{which} with {name}: {took:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
