"""The LoCoMo bench end to end: memory per conversation, scoring, report files."""

from __future__ import annotations

import dataclasses
import json
import platform
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hindsight_lg._files import make_dirs, replace_private
from hindsight_lg.bench._cache import CachedEmbedder
from hindsight_lg.bench.evaluate import Progress, Run, evaluate_conversation, table
from hindsight_lg.bench.locomo import load_locomo
from hindsight_lg.bench.report import plot_lines, plot_recall, recall_table
from hindsight_lg.embeddings import embedder_from_name
from hindsight_lg.memory import Policy

TUNED_ON = tuple(range(5))


@dataclass(frozen=True, slots=True)
class LocomoConfig:
    """What a LoCoMo run measures and where it writes."""

    data: Path
    conversations: tuple[int, ...]
    budgets: tuple[int, ...] = (250, 500, 1000)
    embedder: str = "minilm"
    uri: str = ":memory:"
    out: Path = Path("bench-out/locomo")
    # None: recall's own default, so the tables show what users get.
    k: int | None = None
    questions: int | None = None
    turns: int | None = None
    cache: bool = True
    # Policy fields set for this run (``--policy near_share=0.5``); empty:
    # recall's defaults, which are what users get.
    policy: tuple[tuple[str, Any], ...] = ()


def tuned_policy(fields: Sequence[tuple[str, Any]]) -> Policy:
    """Recall's default policy with ``fields`` set, checked by name and type.

    Raises:
        ValueError: a field ``Policy`` does not have, or a value of the
            wrong type (an int where a float goes is taken).

    Example:
        >>> tuned_policy([("near_share", 0.5)]).near_share
        0.5
    """
    names = {f.name for f in dataclasses.fields(Policy)}
    default = Policy()
    changes: dict[str, Any] = {}
    for name, value in fields:
        if name not in names:
            raise ValueError(f"Policy has no field {name!r} (see docs/recall.md)")
        changes[name] = _typed(name, getattr(default, name), value)
    return dataclasses.replace(default, **changes)


def _typed(name: str, current: Any, value: Any) -> Any:
    """``value`` as the type of the field's default (``None`` defaults take any)."""
    if current is None:
        return value
    if isinstance(current, float) and type(value) is int:
        return float(value)
    # bool is an int to isinstance; a flag and a count must not mix.
    if type(value) is not type(current) and not (
        isinstance(value, type(current)) and type(value) is not bool
    ):
        raise ValueError(
            f"Policy.{name} takes a {type(current).__name__}, not {value!r}"
        )
    return value


def _open_memory(
    uri: str, embedder: Any, folder: Path, index: int, policy: Policy
) -> Any:
    from hindsight_lg import HindsightMemory
    from hindsight_lg.backends import InMemoryBackend

    if uri == ":memory:":
        return HindsightMemory(InMemoryBackend(), embedder, policy=policy)
    if uri == "lite":
        uri = str(folder / f"locomo-{index}.db")
    return HindsightMemory.from_uri(uri, embedder=embedder, policy=policy)


def run_locomo(cfg: LocomoConfig, progress: Progress | None = None) -> Run:
    """Replay and score each chosen conversation; returns every score."""
    convs = load_locomo(cfg.data, cfg.conversations)
    cache = cfg.out.parent / "cache" if cfg.cache else None
    embedder = CachedEmbedder(embedder_from_name(cfg.embedder), cache)
    run = Run(budgets=cfg.budgets)
    policy = tuned_policy(cfg.policy)
    with tempfile.TemporaryDirectory(prefix="hindsight-locomo-") as tmp:
        for conv in convs:
            if progress is not None:
                progress(f"conversation {conv.index}", 0, len(conv.turns))
            memory = _open_memory(cfg.uri, embedder, Path(tmp), conv.index, policy)
            try:
                evaluate_conversation(
                    conv,
                    memory,
                    embedder,
                    run,
                    k=cfg.k,
                    limit=cfg.questions,
                    turns=cfg.turns,
                    progress=progress,
                )
            finally:
                memory.close()
                embedder.save()
            _save_scores(cfg.out, run)
    return run


def _save_scores(folder: Path, run: Run) -> None:
    # After every conversation, so an interrupted run keeps what it measured
    # (``--merge`` reports it).
    make_dirs(folder)
    scores = [asdict(s) for s in run.scores]
    replace_private(folder / "scores.json", json.dumps(scores).encode())


def load_scores(folders: Sequence[Path]) -> Run:
    """The scores of earlier runs (their ``scores.json``) as one run.

    Lets a long run be split across processes or machines, then reported once.
    """
    from hindsight_lg.bench.evaluate import Score

    scores = []
    for folder in folders:
        rows = json.loads((folder / "scores.json").read_text(encoding="utf-8"))
        scores += [Score(**row) for row in rows]
    budgets = tuple(sorted({s.budget for s in scores}))
    return Run(budgets=budgets, scores=scores)


def groups(conversations: Sequence[int]) -> dict[str, list[int]]:
    """Report groups: tuned-on, held-out and together, when both are present."""
    tuned = [c for c in conversations if c in TUNED_ON]
    held = [c for c in conversations if c not in TUNED_ON]
    out = {"all": list(conversations)}
    if tuned and held:
        out = {"conversations 0-4 (tuned on)": tuned, "held out": held, **out}
    return out


def machine() -> str:
    """One line describing where the numbers were measured."""
    import os

    cores = os.cpu_count() or 0
    return (
        f"{platform.machine()} {cores} cores, {platform.system()} "
        f"{platform.release()}, Python {platform.python_version()}"
    )


_TITLES = {"recall": "evidence recall", "coverage": "answer coverage"}


def _section(cfg: LocomoConfig, run: Run, name: str, convs: list[int]) -> list[str]:
    parts: list[str] = []
    slug = name.split(" (")[0].replace(" ", "-")
    for measure, title in _TITLES.items():
        for budget in cfg.budgets:
            cells = table(run.scores, budget, convs, measure)
            parts += [
                "",
                f"## {name}, {title}, {budget} tokens",
                "",
                recall_table(cells),
            ]
            if measure == "recall":
                png = cfg.out / f"recall-{slug}-{budget}.png"
                plot_recall(cells, png, f"LoCoMo {title}, {name}, {budget} tokens")
                parts.append(f"\n![{name} {budget}]({png.name})")
    return parts


def write_report(cfg: LocomoConfig, run: Run, command: str) -> Path:
    """Markdown report, plots and raw scores in ``cfg.out``; returns the report path."""
    make_dirs(cfg.out)
    k = "recall's default" if cfg.k is None else str(cfg.k)
    parts = [
        "# LoCoMo evidence recall and answer coverage",
        "",
        f"Command: `{command}`  ",
        f"Machine: {machine()}  ",
        f"Embedder: {cfg.embedder}; store: {cfg.uri}; conversations: "
        f"{','.join(map(str, cfg.conversations))}; k: {k}",
    ]
    if cfg.policy:
        tuned = ", ".join(f"{n}={v!r}" for n, v in cfg.policy)
        parts[-1] += f"  \nPolicy (tuned, not recall's defaults): {tuned}"

    if run.turns:
        parts += [
            "",
            f"Capture: {run.turns} turns in {run.capture_seconds:.1f} s "
            f"({run.turns / max(run.capture_seconds, 1e-9):.1f} turns/s, embeddings "
            "from the cache; see `bench scale` for capture throughput)",
        ]
    for name, convs in groups(cfg.conversations).items():
        parts += _section(cfg, run, name, convs)
    parts += ["", "## Recall against budget", "", "![budget](recall-budget.png)"]
    _plot_budget(cfg, run)
    report = cfg.out / "report.md"
    replace_private(report, ("\n".join(parts) + "\n").encode())
    _save_scores(cfg.out, run)
    return report


def _plot_budget(cfg: LocomoConfig, run: Run) -> None:
    series: dict[str, list[tuple[float, float]]] = {}
    for budget in cfg.budgets:
        for system, row in table(run.scores, budget).items():
            series.setdefault(system, []).append((budget, 100 * row["overall"]))
    plot_lines(
        series,
        cfg.out / "recall-budget.png",
        title="LoCoMo evidence recall against budget",
        xlabel="budget (tokens)",
        ylabel="evidence recall (%)",
    )


def headline(cfg: LocomoConfig, run: Run) -> str:
    """The tables printed at the end: both measures, every budget, per group."""
    out = []
    for name, convs in groups(cfg.conversations).items():
        for measure, title in _TITLES.items():
            for budget in cfg.budgets:
                cells = table(run.scores, budget, convs, measure)
                out += [f"\n{name}, {title}, {budget} tokens", recall_table(cells)]
    return "\n".join(out)


def stderr_progress() -> Progress:
    """A progress callback printing one updating line per phase on stderr."""
    state = {"last": 0.0}

    def show(phase: str, n: int, total: int) -> None:
        now = time.monotonic()
        if n not in (0, total) and now - state["last"] < 0.5:
            return
        state["last"] = now
        end = "\n" if n == total else ""
        sys.stderr.write(f"\r{phase}: {n}/{total}" + " " * 8 + end)
        sys.stderr.flush()

    return show
