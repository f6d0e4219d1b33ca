"""Tables, targets and report of the server scale bench (:mod:`.server_scale`)."""

from __future__ import annotations

import math
from pathlib import Path

from hindsight_lg._files import make_dirs, replace_private
from hindsight_lg.bench.report import plot_lines
from hindsight_lg.bench.runner import machine
from hindsight_lg.bench.scale import ScaleRow
from hindsight_lg.bench.scale_report import (
    Target,
    scale_table,
    stages_table,
    targets_table,
)
from hindsight_lg.bench.server_scale import ServerConfig, ServerRun

RECALL_TO_RAW = 1.5  # recall p95 over one raw filtered search's p95, on a server
RECALL_P95_MS = 100.0
BATCHED_PER_S = 200.0
TO_MODEL = 0.8  # capture and submit() over the model alone on the same turns


def _pair(p: tuple[float, float]) -> str:
    return f"{p[0]:.1f} / {p[1]:.1f}"


def server_table(run: ServerRun) -> str:
    """Markdown: what the Lite table lacks, one row per size."""
    lines = [
        "| memories | tenancy of the store | submit to searchable p50/p95 ms "
        "| raw search, plain field p50/p95 | raw search, partition key p50/p95 "
        "| raw search, Strong p50/p95 | server disk MB |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in run.rows:
        disk = "-" if r.server_disk_mb is None else f"{r.server_disk_mb:.0f}"
        lines.append(
            f"| {r.row.size:,} | {r.tenancy} | {_pair(r.visible_ms)} "
            f"| {_pair(r.raw_filter)} | {_pair(r.raw_partitioned)} "
            f"| {_pair(r.raw_strong)} | {disk} |"
        )
    return "\n".join(lines)


def held_table(run: ServerRun) -> str:
    """Markdown: the recall pass with the cache bounded to hold every tenant."""
    held = [r.row for r in run.rows if r.row.held is not None]
    if not held:
        return ""
    lines = [
        "Tuned: the same recalls with the read cache bounded to hold every tenant "
        "(`with_read_cache(backend, max_bytes=...)`), where the default 1 GiB did not:",
        "",
        "| memories | namespaces | recall p50/p95 | raw search p50/p95 | p95 ratio "
        "| cache MB |",
        "|---|---|---|---|---|---|",
    ]
    for r in held:
        assert r.held is not None
        recall, raw, mb = r.held
        ratio = recall[1] / max(raw[1], 1e-9)
        lines.append(
            f"| {r.size:,} | {r.namespaces} | {_pair(recall)} | {_pair(raw)} "
            f"| {ratio:.2f} | {mb:.0f} |"
        )
    return "\n".join(lines)


def growth_table(run: ServerRun) -> str:
    """Markdown: the exponent ``b`` of ``y = a * size**b`` for every figure."""
    sizes = ", ".join(f"{r.row.size:,}" for r in run.rows)
    lines = [f"| figure | growth exponent over {sizes} |", "|---|---|"]
    for name, b in run.growth.items():
        lines.append(f"| {name} | {'-' if math.isnan(b) else f'{b:.2f}'} |")
    return "\n".join(lines)


def server_targets(run: ServerRun) -> list[Target]:
    """The server targets, judged at the largest size run (tuned rows labelled)."""
    if not run.rows:
        return []
    r = max(run.rows, key=lambda r: r.row.size).row
    where = f"{r.size:,} in {r.namespaces} ns"
    found = _recall_targets(r.recall, r.raw, where)
    if r.held is not None:
        found += _recall_targets(
            r.held[0], r.held[1], f"{where}, tuned: cache holds every tenant"
        )
    found += _capture_targets(run.embedder, r, where)
    return found


def _limited(r: ScaleRow, mode: str) -> str:
    st = r.stages.get(mode)
    return f" (limited by {st.limit})" if st is not None else ""


def _capture_targets(embedder: str, r: ScaleRow, where: str) -> list[Target]:
    """Batched capture at 200 turns/s (hashing), or each mode against its model."""
    if embedder == "hashing":
        return [
            Target(
                f"capture() batched, {where}",
                f">= {BATCHED_PER_S:.0f} turns/s",
                f"{r.batched_per_s:.0f} turns/s{_limited(r, 'batched')}",
                r.batched_per_s / BATCHED_PER_S,
                most=False,
            )
        ]
    found = []
    for mode, rate in (("capture", r.capture_per_s), ("submit", r.submit_per_s)):
        alone = r.model_alone.get(mode, 0.0)
        share = rate / alone if alone else 0.0
        found.append(
            Target(
                f"{mode}() / {embedder} alone on the same turns, {where}",
                f">= {TO_MODEL}",
                f"{rate:.1f} / {alone:.1f} turns/s = {share:.2f}" + _limited(r, mode),
                share / TO_MODEL,
                most=False,
            )
        )
    return found


def _recall_targets(
    recall: tuple[float, float], raw: tuple[float, float], where: str
) -> list[Target]:
    share = recall[1] / max(raw[1], 1e-9)
    return [
        Target(
            f"recall p95 / raw filtered search p95, {where}",
            f"<= {RECALL_TO_RAW}",
            f"{recall[1]:.1f} / {raw[1]:.1f} ms = {share:.2f}",
            share / RECALL_TO_RAW,
        ),
        Target(
            f"recall p95, {where}",
            f"<= {RECALL_P95_MS:.0f} ms",
            f"{recall[1]:.1f} ms",
            recall[1] / RECALL_P95_MS,
        ),
    ]


def server_summary(run: ServerRun) -> str:
    """Everything printed at the end of a server run."""
    rows = [r.row for r in run.rows]
    return "\n\n".join(
        [
            scale_table(rows),
            stages_table(rows),
            server_table(run),
            *([held_table(run)] if held_table(run) else []),
            growth_table(run),
            targets_table(server_targets(run)),
        ]
    )


def write_server_report(cfg: ServerConfig, run: ServerRun, command: str) -> Path:
    """Markdown report and growth plot in ``cfg.scale.out``; returns its path."""
    out = cfg.scale.out
    make_dirs(out)
    series = {
        "recall p95": [(r.row.size, r.row.recall[1]) for r in run.rows],
        "raw search p95 (store)": [(r.row.size, r.row.raw[1]) for r in run.rows],
        "raw search p95 (partition key)": [
            (r.row.size, r.raw_partitioned[1]) for r in run.rows
        ],
        "submit to searchable p95": [(r.row.size, r.visible_ms[1]) for r in run.rows],
    }
    plot_lines(
        series,
        out / "growth.png",
        title="Latency against size (Milvus server)",
        xlabel="memories",
        ylabel="ms",
        logx=True,
    )
    text = "\n".join(
        [
            "# Scale: capture and recall on a Milvus server",
            "",
            f"Command: `{command}`  ",
            f"Machine: {machine()}  ",
            f"Server: {cfg.uri}; embedder: {cfg.scale.embedder}; recalls per size: "
            f"{cfg.scale.queries}; namespaces: {cfg.scale.namespaces}",
            "",
            server_summary(run),
            "",
            "Latencies in ms (p50 / p95). Peak RSS is this process's peak so far "
            "(the app, not the server). Growth exponent b: y = a * size**b fitted "
            "over the sizes run. Raw searches are one filtered dense search at "
            "the store's read consistency (Session) unless marked Strong, which "
            "waits for the server's time tick (proxy.timeTickInterval).",
            "",
            "![growth](growth.png)",
        ]
    )
    report = out / "report.md"
    replace_private(report, (text + "\n").encode())
    return report
