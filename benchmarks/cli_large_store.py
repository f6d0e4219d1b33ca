"""Commands that embed nothing on a large Milvus Lite file, against the import.

N memories (the scale bench's sentences, with edges) are bulk-loaded into one
namespace of a fresh Milvus Lite file. Each command then runs in a fresh
process, interleaved with ``python -c "import hindsight_lg"`` and with the
floor of any command on a Lite file (importing pymilvus and Milvus Lite's
server too), so all three see the same machine load. Figures are medians.

    OMP_NUM_THREADS=1 python benchmarks/cli_large_store.py
    python benchmarks/cli_large_store.py --memories 20000 --repeat 5
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

from hindsight_lg import HindsightMemory
from hindsight_lg.bench.scale import bulk_load
from hindsight_lg.bench.startup import LITE_FLOOR, wall

IMPORT = [sys.executable, "-c", "import hindsight_lg"]
FLOOR = [sys.executable, "-c", LITE_FLOOR]


def build(db: str, memories: int) -> None:
    """Bulk-load ``memories`` records into namespace ``ns0`` of ``db``."""
    memory = HindsightMemory.from_uri(db, embedder="hashing")
    try:
        bulk_load(memory, 0, memories, 1, random.Random(1))
    finally:
        memory.close()


def commands(db: str) -> dict[str, list[str]]:
    """The timed commands, each a fresh ``python -m hindsight_lg.cli`` process."""
    store = ["--uri", db, "--embedder", "hashing"]
    cli = [sys.executable, "-m", "hindsight_lg.cli"]
    return {
        "list": [*cli, "list", "-n", "ns0", *store],
        "stats": [*cli, "stats", "-n", "ns0", *store],
        "namespaces": [*cli, "namespaces", *store],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="hindsight-cli-") as tmp:
        db = str(Path(tmp) / "large.db")
        print(f"building {args.memories} memories in one namespace ...", flush=True)
        build(db, args.memories)
        spent: dict[str, list[float]] = {"import": [], "floor": []}
        for _ in range(args.repeat):
            for name, argv in commands(db).items():
                spent["import"].append(wall(IMPORT))
                spent["floor"].append(wall(FLOOR))
                spent.setdefault(name, []).append(wall(argv))
    base = statistics.median(spent["import"])
    print(f"\n{args.memories} memories in one namespace, medians of {args.repeat}")
    print("| command | wall s | x import |")
    print("|---|---|---|")
    for name, values in spent.items():
        seconds = statistics.median(values)
        print(f"| {name} | {seconds:.2f} | {seconds / base:.2f} |")


if __name__ == "__main__":
    main()
