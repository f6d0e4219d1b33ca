"""CLI start-up: commands that embed nothing, against ``import hindsight_lg``.

Builds the demo database once (``hindsight-lg demo``, which loads the default
embedding model), then times each command in a fresh process, interleaved
with ``python -c "import hindsight_lg"`` so both see the same machine load.
Each figure is the median of ``repeats`` runs; ``forget`` runs once, last,
because it erases what the others read.
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
    """

    import_s: float = 0.0
    commands: dict[str, float] = field(default_factory=dict)
    store_import_s: float = 0.0
    lite_import_s: float = 0.0

    def ratios(self) -> dict[str, float]:
        """Each command's time over the import's."""
        return {
            name: seconds / max(self.import_s, 1e-9)
            for name, seconds in self.commands.items()
        }


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


def measure_startup(
    folder: Path, progress: Callable[[str], None], repeats: int = 3
) -> Startup:
    """Build the demo database in ``folder`` and time the commands against it."""
    db = str(folder / "demo.db")
    progress("cli: building the demo database (hindsight-lg demo)")
    subprocess.run(_cli("demo", "--uri", db), capture_output=True, check=True)
    commands = _commands(db, _first_id(db))
    imports: list[float] = []
    floors: list[float] = []
    lite_floors: list[float] = []
    spent: dict[str, list[float]] = {name: [] for name in commands}
    for i in range(repeats):
        progress(f"cli: round {i + 1} of {repeats}")
        for name, argv in commands.items():
            imports.append(wall([sys.executable, "-c", "import hindsight_lg"]))
            spent[name].append(wall(argv))
        floors.append(wall([sys.executable, "-c", "import hindsight_lg, pymilvus"]))
        lite_floors.append(wall([sys.executable, "-c", LITE_FLOOR]))
    imports.append(wall([sys.executable, "-c", "import hindsight_lg"]))
    spent["forget"] = [wall(_cli("forget", "-n", NAMESPACE, "--yes", "--uri", db))]
    return Startup(
        import_s=statistics.median(imports),
        commands={name: statistics.median(v) for name, v in spent.items()},
        store_import_s=statistics.median(floors),
        lite_import_s=statistics.median(lite_floors),
    )


def startup_table(startup: Startup) -> str:
    """Markdown: each command's median wall time and its ratio to the import."""
    base = max(startup.import_s, 1e-9)
    lines = [
        "| command | wall s (median) | x import |",
        "|---|---|---|",
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
    return "\n".join(lines)
