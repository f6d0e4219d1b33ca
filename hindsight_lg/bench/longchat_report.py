"""Tables and the markdown report of the long-chat bench, per chat and overall.

Means are over questions (a question counts once per system, whatever its
chat), so the overall row weighs chats by how many questions they ask. The
ratio row divides hindsight's value by the better of the two hybrid
baselines in each column: the fairer of them on that kind of question.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path

from hindsight_lg._files import make_dirs, replace_private
from hindsight_lg.bench.longchat import UPDATING
from hindsight_lg.bench.longchat_eval import (
    CHUNKS,
    SYSTEM,
    SYSTEMS,
    TURNS,
    ChatRun,
    ChatScore,
)
from hindsight_lg.bench.longchat_run import LongChatConfig, save_scores
from hindsight_lg.bench.runner import machine

CATEGORY_ORDER = (
    "Dynamic Incremental",
    UPDATING,
    "Implicit Preference",
    "Temporal-reasoning",
)
MEASURES = {
    "recall": "evidence recall",
    "coverage": "answer coverage (the reply's words)",
    "points": "point coverage (the needed memory points' words)",
}
Cells = dict[str, dict[str, float]]


def _mine(scores: Sequence[ChatScore], chats: Sequence[str] | None) -> list[ChatScore]:
    wanted = None if chats is None else set(chats)
    return [s for s in scores if wanted is None or s.chat in wanted]


def categories(scores: Sequence[ChatScore]) -> list[str]:
    """The categories present, RealMem's four first, then any other by name."""
    present = {s.category for s in scores}
    known = [c for c in CATEGORY_ORDER if c in present]
    return known + sorted(present - set(known))


def table(
    scores: Sequence[ChatScore], measure: str, chats: Sequence[str] | None = None
) -> Cells:
    """Mean ``measure`` by system: per category, overall, and how many questions.

    Questions without a value for the measure are left out of its means.
    """
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; one of {tuple(MEASURES)}")
    rows = [s for s in _mine(scores, chats) if getattr(s, measure) is not None]
    out: Cells = {}
    for system in SYSTEMS:
        mine = [s for s in rows if s.system == system]
        if not mine:
            continue
        cells = {
            cat: statistics.fmean(
                getattr(s, measure) for s in mine if s.category == cat
            )
            for cat in categories(mine)
        }
        cells["overall"] = statistics.fmean(getattr(s, measure) for s in mine)
        cells["questions"] = float(len(mine))
        out[system] = cells
    return out


def ratios(cells: Cells) -> dict[str, float | None]:
    """hindsight / the better hybrid baseline, per column (``None`` over a zero)."""
    mine = cells.get(SYSTEM, {})
    out: dict[str, float | None] = {}
    for column, value in mine.items():
        if column == "questions":
            continue
        best = max(cells.get(s, {}).get(column, 0.0) for s in (TURNS, CHUNKS))
        out[column] = value / best if best else None
    return out


def render(cells: Cells) -> str:
    """A markdown table: systems by category, overall and questions, then the ratio.

    Example:
        >>> print(render({"hindsight": {"overall": 0.5, "questions": 2.0},
        ...               "hybrid-turns": {"overall": 0.25, "questions": 2.0}}))
        | system | overall | questions |
        |---|---|---|
        | hindsight | 50.0 | 2 |
        | hybrid-turns | 25.0 | 2 |
        | hindsight / better hybrid | 2.00x |  |
    """
    if not cells:
        return "(no questions)"
    columns = [c for c in next(iter(cells.values())) if c != "questions"]
    lines = [
        "| system | " + " | ".join([*columns, "questions"]) + " |",
        "|" + "---|" * (len(columns) + 2),
    ]
    for system, row in cells.items():
        values = [f"{100 * row[c]:.1f}" if c in row else "-" for c in columns]
        lines.append(
            f"| {system} | " + " | ".join([*values, f"{row['questions']:.0f}"])
        )
        lines[-1] += " |"
    if SYSTEM in cells:
        r = ratios(cells)
        shown = [f"{v:.2f}x" if (v := r.get(c)) is not None else "-" for c in columns]
        lines.append("| hindsight / better hybrid | " + " | ".join(shown) + " |  |")
    return "\n".join(lines)


def injected(scores: Sequence[ChatScore], chats: Sequence[str] | None = None) -> str:
    """Lines and tokens each system injects for questions no earlier turn answers."""
    rows = [s for s in _mine(scores, chats) if s.recall is None]
    if not rows:
        return "(every question has evidence in an earlier session)"
    lines = ["| system | questions | lines | tokens | empty |", "|---|---|---|---|---|"]
    for system in SYSTEMS:
        mine = [s for s in rows if s.system == system]
        if mine:
            lines.append(
                f"| {system} | {len(mine)} | {statistics.fmean(s.lines for s in mine):.1f}"
                f" | {statistics.fmean(s.tokens for s in mine):.0f}"
                f" | {100 * statistics.fmean(s.lines == 0 for s in mine):.0f}% |"
            )
    return "\n".join(lines)


def updates(scores: Sequence[ChatScore], chats: Sequence[str] | None = None) -> str:
    """Share of Dynamic Updating questions whose updated value outranks the old one."""
    rows = [s for s in _mine(scores, chats) if s.updated is not None]
    if not rows:
        return "(no Dynamic Updating question with both an updated and an old value)"
    lines = ["| system | updated value first | questions |", "|---|---|---|"]
    for system in SYSTEMS:
        mine = [float(s.updated or 0.0) for s in rows if s.system == system]
        if mine:
            lines.append(
                f"| {system} | {100 * statistics.fmean(mine):.1f} | {len(mine)} |"
            )
    return "\n".join(lines)


def groups(run: ChatRun) -> dict[str, list[str] | None]:
    """Each chat on its own, then all together (when there are several)."""
    chats = list(dict.fromkeys(s.chat for s in run.scores)) or list(run.sessions)
    out: dict[str, list[str] | None] = {c: [c] for c in chats}
    if len(chats) > 1:
        out["all"] = None
    return out


def section(run: ChatRun, name: str, chats: Sequence[str] | None) -> list[str]:
    """The report's tables for one group of chats."""
    parts: list[str] = []
    for measure, title in MEASURES.items():
        cells = table(run.scores, measure, chats)
        parts += ["", f"## {name}, {title}, {run.budget} tokens", "", render(cells)]
    parts += ["", f"## {name}, {UPDATING}: updated value ranked first", ""]
    parts += [updates(run.scores, chats)]
    parts += ["", f"## {name}, questions without reachable evidence: injected", ""]
    parts += [injected(run.scores, chats)]
    return parts


def summary(run: ChatRun) -> list[str]:
    """One line per chat: sessions and turns replayed, questions asked."""
    lines = []
    for chat, sessions in run.sessions.items():
        mine = [s for s in run.scores if s.chat == chat and s.system == SYSTEM]
        reachable = sum(s.recall is not None for s in mine)
        pairs = sum(s.updated is not None for s in mine)
        lines.append(
            f"- {chat}: {sessions} sessions, {run.turns.get(chat, 0)} turns, "
            f"{len(mine)} questions ({reachable} with reachable evidence, "
            f"{pairs} {UPDATING} with an old and an updated value)"
        )
    return lines


def write_report(cfg: LongChatConfig, run: ChatRun, command: str) -> Path:
    """``report.md`` and the raw scores in ``cfg.out``; returns the report's path."""
    make_dirs(cfg.out)
    parts = [
        "# Long-chat evidence recall and coverage (causal protocol)",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine()}  ",
        f"Embedder: {cfg.embedder}; budget: {run.budget} tokens; store: in-memory",
    ]
    if cfg.policy:
        tuned = ", ".join(f"{n}={v!r}" for n, v in cfg.policy)
        parts[-1] += f"  \nPolicy (tuned, not recall's defaults): {tuned}"
    parts += ["", *summary(run), "", *_timing(run)]
    for name, chats in groups(run).items():
        parts += section(run, name, chats)
    report = cfg.out / "report.md"
    replace_private(report, ("\n".join(parts) + "\n").encode())
    save_scores(cfg.out, run)
    return report


def _timing(run: ChatRun) -> list[str]:
    turns = sum(run.turns.values())
    out = []
    if run.capture_seconds:
        rate = turns / run.capture_seconds
        out.append(
            f"Capture: {turns} turns in {run.capture_seconds:.0f} s ({rate:.1f} "
            "turns/s, embeddings warmed in batches first)  "
        )
    if run.recall_ms:
        cuts = (
            statistics.quantiles(run.recall_ms, n=20) if len(run.recall_ms) > 1 else []
        )
        p95 = cuts[-1] if cuts else run.recall_ms[0]
        out.append(
            f"Recall: median {statistics.median(run.recall_ms):.0f} ms, "
            f"p95 {p95:.0f} ms over {len(run.recall_ms)} questions"
        )
    return out


def headline(run: ChatRun, measures: Mapping[str, str] = MEASURES) -> str:
    """The tables printed at the end: every measure, per chat and overall."""
    out: list[str] = []
    for name, chats in groups(run).items():
        for measure, title in measures.items():
            out += [f"\n{name}, {title}, {run.budget} tokens"]
            out += [render(table(run.scores, measure, chats))]
        out += [
            f"\n{name}, {UPDATING}: updated value first",
            updates(run.scores, chats),
        ]
    return "\n".join(out)
