"""How long one tenant's backlog delays another tenant's one-line turn.

Tenant ``big`` submits one turn of N messages, then tenant ``small`` submits
one line; both go to the shared background worker. Printed per N: the time
until ``small``'s memory is recallable (its delay), the time until ``big``'s
whole turn is written through the worker, and the big turn's own capture
time when captured alone (one ``capture()`` call).

Tenants take turns on the worker, one batch of at most ``max_messages`` (64)
messages each, so the delay is about one batch's capture time whatever N is
(it was the whole backlog's before); the worker's total for the big turn
shows what cutting it into batches costs. Background consolidation is off
(``Policy(consolidate_every=0)``): it measures capture only.

    OMP_NUM_THREADS=1 python -m benchmarks.fairness            # N = 500, 1000, 2000
    OMP_NUM_THREADS=1 python -m benchmarks.fairness 5000
"""

from __future__ import annotations

import sys
import time

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


def _turn(n: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"Note {i}: the parcel Topic{i} goes to Town{i}."}
        for i in range(n)
    ]


def measure(n: int) -> tuple[float, float, float]:
    """(small tenant's delay, big turn through the worker, big turn alone) in s."""
    # Capture alone: the background consolidation every 500 episodes would
    # otherwise run beside the measurement (and after "alone", during it).
    policy = Policy(consolidate_every=0)
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), cache=False, policy=policy
    )
    started = time.perf_counter()
    memory.capture(_turn(n), namespace="alone")
    alone = time.perf_counter() - started
    memory.submit(_turn(n), namespace="big")
    submitted = time.perf_counter()
    memory.submit("I prefer green tea over coffee", namespace="small")
    while not memory.list_memories("small"):
        time.sleep(0.005)
    delay = time.perf_counter() - submitted
    memory.flush()
    worker = time.perf_counter() - submitted
    memory.close()
    return delay, worker, alone


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [500, 1000, 2000]
    print("messages  small-tenant delay s  big turn via worker s  big turn alone s")
    for n in sizes:
        delay, worker, alone = measure(n)
        print(f"{n:8d}  {delay:20.2f}  {worker:21.2f}  {alone:16.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
