"""Markdown tables and PNG plots for benchmark results (matplotlib, Agg backend)."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hindsight_lg._files import make_dirs, replace_private
from hindsight_lg.bench.locomo import CATEGORIES

Table = Mapping[str, Mapping[str, float]]
_COUNTS = ("questions", "items", "tokens")


def _pct(value: float) -> str:
    return f"{100 * value:.1f}"


def recall_table(cells: Table, *, ratio_to: str = "hybrid") -> str:
    """A markdown table: systems by category, overall, and the ratio row.

    Example:
        >>> print(recall_table({"hybrid": {"overall": 0.5, "questions": 2.0}}))
        | system | overall | questions |
        |---|---|---|
        | hybrid | 50.0 | 2 |
    """
    if not cells:
        return "(no questions)"
    first = next(iter(cells.values()))
    columns = [c for c in (*CATEGORIES.values(), "overall") if c in first]
    extra = [c for c in _COUNTS if c in first]
    head = "| system | " + " | ".join(columns + extra) + " |"
    lines = [head, "|" + "---|" * (len(columns) + len(extra) + 1)]
    for system, row in cells.items():
        values = [_pct(row[c]) for c in columns] + [f"{row[c]:.0f}" for c in extra]
        lines.append(f"| {system} | " + " | ".join(values) + " |")
    base = cells.get(ratio_to)
    if "hindsight" in cells and base is not None:
        ratios = [
            f"{cells['hindsight'][c] / base[c]:.2f}x" if base[c] else "-"
            for c in columns
        ]
        blanks = [""] * len(extra)
        lines.append(
            f"| hindsight / {ratio_to} | " + " | ".join(ratios + blanks) + " |"
        )
    return "\n".join(lines)


def _pyplot() -> Any:  # matplotlib.pyplot, imported on first use
    try:
        import matplotlib
    except ImportError:
        raise ImportError("pip install 'hindsight-lg[bench]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: Path) -> None:
    """Write a figure as a private file (see ``hindsight_lg._files``)."""
    data = io.BytesIO()
    fig.savefig(data, dpi=110, format=path.suffix.lstrip(".") or "png")
    make_dirs(path.parent)
    replace_private(path, data.getvalue())


def plot_recall(cells: Table, path: Path, title: str) -> Path:
    """Grouped bars: evidence recall per category for each system."""
    plt = _pyplot()
    first = next(iter(cells.values()))
    columns = [c for c in (*CATEGORIES.values(), "overall") if c in first]
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / max(1, len(cells))
    for i, (system, row) in enumerate(cells.items()):
        xs = [j + i * width for j in range(len(columns))]
        ax.bar(xs, [100 * row[c] for c in columns], width, label=system)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(columns))], columns)
    ax.set_ylabel("evidence recall (%)")
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def plot_lines(
    series: Mapping[str, Sequence[tuple[float, float]]],
    path: Path,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
) -> Path:
    """One line per series of ``(x, y)`` points (latency against size, recall against budget)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, points in series.items():
        xs, ys = zip(*sorted(points), strict=True) if points else ((), ())
        ax.plot(xs, ys, marker="o", label=name)
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path
