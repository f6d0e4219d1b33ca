"""Share of turns whose recall misses its deadline, at N concurrent turns.

A single-process app on Milvus Lite with the packaged MiniLM and every default
(the policy's 0.2 s recall deadline included): the store is filled, closed and
opened again as a fresh process would, then R rounds of N concurrent turns each
recall for their own user (``arecall``, as LangGraph's async nodes do). The
first round runs right after opening, so warm-up (model load, collection
load, first search) is in the measurement. Prints the share of turns that
degraded (answered without memory) and recall latency percentiles.

    OMP_NUM_THREADS=1 python benchmarks/concurrent_deadlines.py --concurrency 8 --rounds 50

``--freeze`` calls ``gc.freeze()`` once memory is open, as an application may:
a full garbage collection in a process holding torch, pymilvus and Milvus Lite
walks about half a million objects (about 250 ms here, longer than the
deadline); frozen objects are skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hindsight_lg import HindsightMemory

TURNS = [
    "I prefer green tea over coffee in the morning",
    "My sister Lena is getting married in Lisbon in June",
    "I work as a backend engineer at Lumen Labs in Berlin",
    "Remind me to renew my passport before the trip",
    "I don't like Redis for caching, it bit us last year",
    "I love hiking in the Harz mountains on weekends",
    "From now on, answer me in short bullet points",
    "My dog Bruno needs his vaccination next Tuesday",
]
QUESTIONS = [
    "what do I drink in the morning?",
    "when is Lena's wedding?",
    "where do I work?",
    "what should I do before the trip?",
    "what do I think about Redis?",
    "what do I do on weekends?",
    "how should you answer me?",
    "what does Bruno need?",
]


def fill(uri: str, users: int) -> None:
    with HindsightMemory.from_uri(uri, embedder="minilm") as memory:
        for u in range(users):
            for turn in TURNS:
                memory.capture(turn, namespace=f"user-{u}")
        memory.flush()


async def turn(memory: HindsightMemory, user: int, i: int) -> tuple[bool, float]:
    started = time.perf_counter()
    result = await memory.arecall(
        QUESTIONS[(user + i) % len(QUESTIONS)], namespace=f"user-{user}"
    )
    return result.timed_out, time.perf_counter() - started


async def measure(
    uri: str, concurrency: int, rounds: int, freeze: bool = False
) -> list[tuple[bool, float]]:
    opened = time.perf_counter()
    memory = await HindsightMemory.afrom_uri(uri, embedder="minilm")
    print(f"opened in {time.perf_counter() - opened:.2f} s")
    if freeze:
        gc.collect()
        gc.freeze()
    results: list[tuple[bool, float]] = []
    try:
        for i in range(rounds):
            results += await asyncio.gather(
                *(turn(memory, user, i) for user in range(concurrency))
            )
            if i == 0:
                first = list(results)
                print(
                    f"first round: {sum(t for t, _ in first)}/{len(first)} degraded, "
                    f"slowest {max(s for _, s in first) * 1000:.0f} ms"
                )
    finally:
        await memory.aclose()
    return results


def report(results: list[tuple[bool, float]], concurrency: int) -> None:
    degraded = sum(t for t, _ in results)
    latencies = sorted(s * 1000 for _, s in results)
    p = statistics.quantiles(latencies, n=100)
    print(
        f"{concurrency} concurrent turns, {len(results)} turns: "
        f"{degraded} degraded ({100 * degraded / len(results):.2f}%); "
        f"recall p50 {p[49]:.0f} ms, p95 {p[94]:.0f} ms, p99 {p[98]:.0f} ms, "
        f"max {latencies[-1]:.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--fill", metavar="URI", help=argparse.SUPPRESS)
    parser.add_argument(
        "--freeze", action="store_true", help="gc.freeze() once memory is open"
    )
    args = parser.parse_args()
    if args.fill:
        fill(args.fill, args.concurrency)
        return
    with tempfile.TemporaryDirectory() as tmp:
        uri = str(Path(tmp) / "deadlines.db")
        # Filled by another process, so this one opens it cold: model and
        # collections load as they would at an app's start.
        filler = [sys.executable, __file__, "--fill", uri]
        subprocess.run([*filler, "--concurrency", str(args.concurrency)], check=True)
        results = asyncio.run(
            measure(uri, args.concurrency, args.rounds, freeze=args.freeze)
        )
    report(results, args.concurrency)


if __name__ == "__main__":
    main()
