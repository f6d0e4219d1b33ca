"""The scale bench's tables, targets and report (see :mod:`hindsight_lg.bench.scale`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from hindsight_lg._files import make_dirs, replace_private
from hindsight_lg.bench.report import plot_lines
from hindsight_lg.bench.runner import machine
from hindsight_lg.bench.scale import ScaleConfig, ScaleRow, ScaleRun
from hindsight_lg.bench.startup import startup_table

RECALL_TO_RAW = 0.5  # recall p95 over one raw filtered Milvus search's p95
SINGLE_P95_MS = 50.0  # recall p95 at 10k memories in one namespace
CAPTURE_PER_S = 100.0  # capture(), one turn per call, hashing embedder
CLI_TO_IMPORT = 2.0  # a command that embeds nothing, over `import hindsight_lg`


@dataclass(frozen=True, slots=True)
class Target:
    """One target: what it bounds, the bound, the measured value and their ratio.

    ``most`` targets are met at ``ratio <= 1``, the others at ``ratio >= 1``;
    an unjudged one (a ratio to report, such as capture against its model) has
    no pass mark.
    """

    name: str
    bound: str
    measured: str
    ratio: float
    most: bool = True
    judged: bool = True

    @property
    def met(self) -> bool | None:
        if not self.judged:
            return None
        return self.ratio <= 1.0 if self.most else self.ratio >= 1.0


def _recall_target(rows: list[ScaleRow]) -> Target | None:
    spread = [r for r in rows if r.namespaces > 1]
    if not spread:
        return None
    r = max(spread, key=lambda r: r.size)
    share = r.recall[1] / max(r.raw[1], 1e-9)
    return Target(
        f"recall p95 / raw filtered search p95, {r.size:,} in {r.namespaces} ns",
        f"<= {RECALL_TO_RAW}",
        f"{r.recall[1]:.1f} / {r.raw[1]:.1f} ms = {share:.2f}",
        share / RECALL_TO_RAW,
    )


def _single_target(rows: list[ScaleRow]) -> Target | None:
    single = [r for r in rows if r.namespaces == 1]
    if not single:
        return None
    r = max(single, key=lambda r: r.size)
    return Target(
        f"recall p95, {r.size:,} in one namespace",
        f"<= {SINGLE_P95_MS:.0f} ms",
        f"{r.recall[1]:.1f} ms",
        r.recall[1] / SINGLE_P95_MS,
    )


def _capture_target(rows: list[ScaleRow], embedder: str) -> Target | None:
    if not rows:
        return None
    r = min(rows, key=lambda r: r.capture_per_s)
    if embedder == "hashing":
        return Target(
            f"capture() one turn per call, slowest size ({r.size:,})",
            f">= {CAPTURE_PER_S:.0f} turns/s",
            f"{r.capture_per_s:.0f} turns/s",
            r.capture_per_s / CAPTURE_PER_S,
            most=False,
        )
    return Target(
        f"capture() one turn per call / {embedder} alone, slowest size ({r.size:,})",
        "bound by the model (ratio reported)",
        f"{r.capture_per_s:.0f} / {r.model_per_s:.0f} per s",
        r.capture_per_s / max(r.model_per_s, 1e-9),
        judged=False,
    )


def targets(run: ScaleRun, embedder: str) -> list[Target]:
    """Every target the run measured, with its ratio."""
    found = [
        _recall_target(run.rows),
        _single_target(run.rows),
        _capture_target(run.rows, embedder),
    ]
    if run.startup is not None and run.startup.commands:
        name, ratio = max(run.startup.ratios().items(), key=lambda kv: kv[1])
        found.append(
            Target(
                f"CLI command that embeds nothing / import (slowest: {name})",
                f"<= {CLI_TO_IMPORT:.0f}x",
                f"{run.startup.commands[name]:.2f} / {run.startup.import_s:.2f} s",
                ratio / CLI_TO_IMPORT,
            )
        )
    return [t for t in found if t is not None]


def targets_table(found: list[Target]) -> str:
    """Markdown: one line per target; ratio is measured over bound."""
    lines = [
        "| target | bound | measured | ratio to bound | met |",
        "|---|---|---|---|---|",
    ]
    for t in found:
        met = {True: "yes", False: "no", None: "-"}[t.met]
        lines.append(f"| {t.name} | {t.bound} | {t.measured} | {t.ratio:.2f} | {met} |")
    return "\n".join(lines)


def scale_table(rows: list[ScaleRow]) -> str:
    """Markdown: one row per size, latencies in ms as p50/p95."""
    paths = sorted({p for r in rows for p in r.paths})
    head = [
        "memories",
        "namespaces",
        "capture() turns/s",
        "batched turns/s",
        "submit() turns/s",
        "embedder alone /s",
        "recall p50/p95",
        "raw search p50/p95",
        "p95 ratio",
    ]
    tail = ["peak RSS MB", "cache MB", "disk MB"]
    lines = ["| " + " | ".join(head + paths + tail) + " |"]
    lines.append("|" + "---|" * (len(head) + len(paths) + len(tail)))
    for r in rows:
        cells = [
            f"{r.size:,}",
            f"{r.namespaces}",
            f"{r.capture_per_s:.0f}",
            f"{r.batched_per_s:.0f}",
            f"{r.submit_per_s:.0f}",
            f"{r.model_per_s:.0f}",
            f"{r.recall[0]:.1f} / {r.recall[1]:.1f}",
            f"{r.raw[0]:.1f} / {r.raw[1]:.1f}",
            f"{r.recall[1] / max(r.raw[1], 1e-9):.2f}",
            *(f"{r.paths[p][0]:.1f} / {r.paths[p][1]:.1f}" for p in paths),
            f"{r.peak_rss_mb:.0f}",
            f"{r.cache_mb:.0f}",
            f"{r.disk_mb:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def stages_table(rows: list[ScaleRow]) -> str:
    """Markdown: each capture mode's rate, the model alone's, and its stages.

    Stages in ms per turn (see :mod:`hindsight_lg.bench._stages`); commit
    and ahead run behind the captures, on other threads.
    """
    stages = ("embed", "reads", "write", "encode", "wait", "commit", "ahead")
    lines = [
        "| memories | mode | turns/s | model alone turns/s | ratio | "
        + " | ".join(f"{s} ms" for s in stages)
        + " | limited by |",
        "|" + "---|" * (6 + len(stages)),
    ]
    rates = {"capture": "capture_per_s", "batched": "batched_per_s"}
    for r in rows:
        for mode, st in r.stages.items():
            rate = getattr(r, rates.get(mode, "submit_per_s"))
            alone = r.model_alone.get(mode, 0.0)
            ratio = f"{rate / alone:.2f}" if alone else "-"
            cells = [f"{r.size:,}", mode, f"{rate:.0f}", f"{alone:.0f}", ratio]
            cells += [f"{st.ms[s]:.2f}" for s in stages] + [st.limit]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(cfg: ScaleConfig, run: ScaleRun) -> str:
    """The tables printed at the end of a run: sizes, stages, CLI start-up, targets."""
    parts = [scale_table(run.rows), stages_table(run.rows)]
    if run.startup is not None:
        parts.append(startup_table(run.startup))
    parts.append(targets_table(targets(run, cfg.embedder)))
    return "\n\n".join(parts)


def write_scale_report(cfg: ScaleConfig, run: ScaleRun, command: str) -> Path:
    """Markdown report and latency plot in ``cfg.out``; returns the report's path."""
    make_dirs(cfg.out)
    spread = [r for r in run.rows if r.namespaces > 1]
    series = {
        "recall p95": [(r.size, r.recall[1]) for r in spread],
        "recall p50": [(r.size, r.recall[0]) for r in spread],
        "raw search p95": [(r.size, r.raw[1]) for r in spread],
    }
    plot_lines(
        series,
        cfg.out / "latency.png",
        title="Recall latency against size (Milvus Lite)",
        xlabel="memories",
        ylabel="ms",
        logx=True,
    )
    text = "\n".join(
        [
            "# Scale: capture and recall on Milvus Lite",
            "",
            f"Command: `{command}`  ",
            f"Machine: {machine()}  ",
            f"Embedder: {cfg.embedder}; recalls per size: {cfg.queries}; the first "
            f"{cfg.captures} memories of each size are captured, a third each "
            f"through capture() one turn per call, capture() {cfg.batch} turns per "
            "call, and submit() (queued, timed until flush() returns), with the "
            "capture spool; the rest are bulk-loaded records",
            "",
            summary(cfg, run),
            "",
            "Latencies in ms (p50 / p95). Per-path columns: time recall spends in "
            "that path's store calls (read cache included). Cache MB: the read "
            "cache's own estimate of its memory.",
            "",
            "![latency](latency.png)",
        ]
    )
    report = cfg.out / "report.md"
    replace_private(report, (text + "\n").encode())
    return report
