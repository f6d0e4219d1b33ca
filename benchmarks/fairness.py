"""How long one tenant's backlog delays another tenant's one-line turn.

Tenant ``big`` submits one turn of N messages, then tenant ``small`` submits
one line; both go to the shared background worker. Printed: the time until
``small``'s memory is recallable (its delay), and the big turn's own capture
time, per N. The delay is bounded by the big turn's capture time, which is
linear in N (it grew with N squared before the staged vectors were stacked).

    OMP_NUM_THREADS=1 python -m benchmarks.fairness            # N = 500, 1000, 2000
    OMP_NUM_THREADS=1 python -m benchmarks.fairness 5000
"""

from __future__ import annotations

import sys
import time

from hindsight_lg import HindsightMemory
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


def _turn(n: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"Note {i}: the parcel Topic{i} goes to Town{i}."}
        for i in range(n)
    ]


def measure(n: int) -> tuple[float, float]:
    """(small tenant's delay, big turn's capture time) in seconds."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), cache=False)
    started = time.perf_counter()
    memory.capture(_turn(n), namespace="alone")
    alone = time.perf_counter() - started
    memory.submit(_turn(n), namespace="big")
    submitted = time.perf_counter()
    memory.submit("I prefer green tea over coffee", namespace="small")
    while not memory.list_memories("small"):
        time.sleep(0.005)
    delay = time.perf_counter() - submitted
    memory.close()
    return delay, alone


def main(argv: list[str]) -> None:
    sizes = [int(a) for a in argv] or [500, 1000, 2000]
    print("messages  small-tenant delay s  big turn alone s  s per 1k messages")
    for n in sizes:
        delay, alone = measure(n)
        print(f"{n:8d}  {delay:20.2f}  {alone:16.2f}  {1000 * alone / n:17.2f}")


if __name__ == "__main__":
    main(sys.argv[1:])
