"""CLI start-up: commands that embed nothing, against ``import hindsight_lg``.

Builds the demo database once (``hindsight-lg demo``, which loads the default
embedding model), then times each command in a fresh process, interleaved
with ``python -c "import hindsight_lg"`` so both see the same machine load.
Each figure is the median of ``repeats`` runs; ``forget`` runs once, last,
because it erases what the others read.

``recall`` is timed in the same rounds but kept apart from the commands that
embed nothing: it loads the embedding model and measures its calibration, and
its mark is against ``list`` on the same store (at most 2x), not against the
import. ``python -c pass`` is timed too: the floor of any Python start.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

NAMESPACE = "demo-user"  # the namespace `hindsight-lg demo` writes
QUESTION = "What does Maya think about Redis?"  # the demo's own question
# What pymilvus imports to open a Lite file: Milvus Lite runs in the process.
LITE_FLOOR = (
    "import hindsight_lg, pymilvus, milvus_lite.server_manager, "
    "milvus_lite.adapter.grpc.server"
)


@dataclass(slots=True)
class Startup:
    """Median wall seconds of ``import hindsight_lg`` and of each command.

    ``store_import_s`` is ``import hindsight_lg, pymilvus``: the floor of any
    command that opens a Milvus store, whatever it does next; ``lite_import_s``
    adds Milvus Lite's server module, the floor of any command on a Lite file.
    ``python_s`` is ``python -c pass``. ``recall_s`` is ``hindsight-lg recall``
    on the same store as ``list``: not among ``commands``, which embed nothing.
    """

    import_s: float = 0.0
    commands: dict[str, float] = field(default_factory=dict)
    store_import_s: float = 0.0
    lite_import_s: float = 0.0
    python_s: float = 0.0
    recall_s: float = 0.0

    def ratios(self) -> dict[str, float]:
        """Each command's time over the import's."""
        return {
            name: seconds / max(self.import_s, 1e-9)
            for name, seconds in self.commands.items()
        }

    def recall_over_list(self) -> float | None:
        """``recall``'s time over ``list``'s on the same store (the mark: <= 2)."""
        listed = self.commands.get("list")
        if not self.recall_s or not listed:
            return None
        return self.recall_s / listed


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "hindsight_lg.cli", *args]


def wall(argv: list[str]) -> float:
    """Seconds one process takes, start to exit."""
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, timeout=600)
    return time.perf_counter() - start


def _commands(db: str, memory_id: str) -> dict[str, list[str]]:
    store = ["--uri", db]
    named = ["-n", NAMESPACE, *store]
    commands = {
        "list": _cli("list", *named),
        "stats": _cli("stats", *named),
        "audit": _cli("audit", memory_id, *named),
        "export": _cli("export", "-o", str(Path(db).parent / "export.jsonl"), *named),
        "decay": _cli("decay", *named),
        "namespaces": _cli("namespaces", *store),
    }
    return commands


def _first_id(db: str) -> str:
    done = subprocess.run(
        _cli("list", "-n", NAMESPACE, "--uri", db, "--json"),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    rows = json.loads(done.stdout)
    if not rows:
        raise RuntimeError(f"the demo wrote no memories to {db}")
    return str(rows[0]["id"])


# Floors, each a bare ``python -c``: the package; it and pymilvus; those and
# Milvus Lite's server; Python alone.
_FLOORS = {
    "import": "import hindsight_lg",
    "store": "import hindsight_lg, pymilvus",
    "lite": LITE_FLOOR,
    "python": "pass",
}


def _rounds(
    starts: dict[str, list[str]], repeats: int, progress: Callable[[str], None]
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall seconds of each start and of each floor, over ``repeats`` rounds.

    The import is timed before every start, the other floors once a round:
    interleaved, so a change in the machine's load reaches both sides.
    """
    floors = {name: [sys.executable, "-c", code] for name, code in _FLOORS.items()}
    floor_s: dict[str, list[float]] = {name: [] for name in floors}
    spent: dict[str, list[float]] = {name: [] for name in starts}
    for i in range(repeats):
        progress(f"cli: round {i + 1} of {repeats}")
        for name, argv in starts.items():
            floor_s["import"].append(wall(floors["import"]))
            spent[name].append(wall(argv))
        for name in ("store", "lite", "python"):
            floor_s[name].append(wall(floors[name]))
    floor_s["import"].append(wall(floors["import"]))
    return (
        {name: statistics.median(v) for name, v in floor_s.items()},
        {name: statistics.median(v) for name, v in spent.items()},
    )


def measure_startup(
    folder: Path, progress: Callable[[str], None], repeats: int = 3
) -> Startup:
    """Build the demo database in ``folder`` and time the commands against it."""
    db = str(folder / "demo.db")
    progress("cli: building the demo database (hindsight-lg demo)")
    subprocess.run(_cli("demo", "--uri", db), capture_output=True, check=True)
    starts = _commands(db, _first_id(db))
    starts["recall"] = _cli("recall", QUESTION, "-n", NAMESPACE, "--uri", db)
    floors, spent = _rounds(starts, repeats, progress)
    spent["forget"] = wall(_cli("forget", "-n", NAMESPACE, "--yes", "--uri", db))
    recall_s = spent.pop("recall")
    return Startup(
        import_s=floors["import"],
        commands=spent,
        store_import_s=floors["store"],
        lite_import_s=floors["lite"],
        python_s=floors["python"],
        recall_s=recall_s,
    )


def startup_table(startup: Startup) -> str:
    """Markdown: each command's median wall time and its ratio to the import."""
    base = max(startup.import_s, 1e-9)
    lines = [
        "| command | wall s (median) | x import |",
        "|---|---|---|",
    ]
    if startup.python_s:
        lines.append(
            f"| `python -c pass` | {startup.python_s:.2f} | "
            f"{startup.python_s / base:.2f} |"
        )
    lines += [
        f"| `import hindsight_lg` | {startup.import_s:.2f} | 1.00 |",
        f"| `import hindsight_lg, pymilvus` (floor of any store command) | "
        f"{startup.store_import_s:.2f} | {startup.store_import_s / base:.2f} |",
    ]
    if startup.lite_import_s:
        lines.append(
            "| the same and Milvus Lite's server (floor of any command on a Lite "
            f"file) | {startup.lite_import_s:.2f} | "
            f"{startup.lite_import_s / base:.2f} |"
        )
    ratios = startup.ratios()
    for name, seconds in startup.commands.items():
        lines.append(f"| `{name}` | {seconds:.2f} | {ratios[name]:.2f} |")
    over_list = startup.recall_over_list()
    if over_list is not None:
        lines.append(
            f"| `recall` (loads the model; {over_list:.2f}x `list`, mark 2x) | "
            f"{startup.recall_s:.2f} | {startup.recall_s / base:.2f} |"
        )
    return "\n".join(lines)
