"""CPU time a recall spends in process, on the in-memory store.

CPU time (``time.process_time``), not wall time, so other work on the machine
moves it less; the best of three passes is printed. Loads ``--per`` synthetic
memories (``bench scale``'s turns) into each of 20 tenants, then recalls this
bench's queries over them. It reads nothing new, so it runs on any commit:
run it on the commit before a change and after, alternately.

    OMP_NUM_THREADS=1 python -m benchmarks.recall_cpu --per 100
"""

from __future__ import annotations

import argparse
import random
import time

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.bench.scale import NAMES, WORDS, bulk_load
from hindsight_lg.embeddings import embedder_from_name

TENANTS = 20


def cpu_ms_per_recall(per: int, queries: int = 100, passes: int = 3) -> float:
    """Best-of-``passes`` CPU milliseconds per recall over ``TENANTS`` tenants."""
    memory = HindsightMemory(
        InMemoryBackend(), embedder_from_name("hashing"), cache=False
    )
    bulk_load(memory, 0, per * TENANTS, TENANTS, random.Random(1))
    rng = random.Random(7)
    asked = [
        f"what did {rng.choice(NAMES)} say about {rng.choice(WORDS)}?"
        for _ in range(queries)
    ]
    for q in asked[:10]:  # first recalls build the query readers' tables
        memory.recall(q, namespace="ns1", timeout=None)
    best = float("inf")
    for _ in range(passes):
        start = time.process_time()
        for i, q in enumerate(asked):
            memory.recall(q, namespace=f"ns{i % TENANTS}", timeout=None)
        best = min(best, (time.process_time() - start) / len(asked) * 1000)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per", type=int, default=100, help="memories per tenant")
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    ms = cpu_ms_per_recall(args.per, args.queries)
    print(f"{args.per} memories a tenant: {ms:.2f} CPU ms per recall")


if __name__ == "__main__":
    main()
