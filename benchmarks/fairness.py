"""How much one tenant's backlog costs another tenant, two ways.

**A big turn** (the default): tenant ``big`` submits one turn of N messages,
then tenant ``small`` submits one line; both go to the shared background
worker. Printed per N: the time until ``small``'s memory is recallable (its
delay), the time until ``big``'s whole turn is written through the worker,
and the big turn's own capture time when captured alone (one ``capture()``
call). Tenants take turns on the worker, one batch of at most
``max_messages`` (64) messages each, so the delay is about one batch's
capture time whatever N is (it was the whole backlog's before); the worker's
total for the big turn shows what cutting it into batches costs. Background
consolidation is off (``Policy(consolidate_every=0)``): it measures capture
only. In-memory reference backend, hashing embedder.

**A flood** (``--flood N``): tenant ``a`` submits N one-line turns from its
own thread as fast as ``submit()`` takes them, and keeps its lane full;
meanwhile tenant ``b`` goes on as a chat would: ``--rounds`` times a
``submit()`` then a ``recall()`` at the default deadline (0.2 s), and
``--searchable`` times a new line submitted and polled (recall without a
deadline, every 10 ms) until recall finds it (give up after 120 s: ``inf``). The same for ``b`` alone first
(the idle reference), then during the flood, in one run; printed side by
side with the ratio flood / idle, and ``a``'s backlog at the start and end
of the window (it must still be queued: the figures are "during"). A Milvus
Lite file with its default spool and group commit, the hashing embedder (so
the worker's capture, not a model, is the load), every other default.

    OMP_NUM_THREADS=1 python -m benchmarks.fairness            # N = 500, 1000, 2000
    OMP_NUM_THREADS=1 python -m benchmarks.fairness 5000
    OMP_NUM_THREADS=1 python -m benchmarks.fairness --flood 5000
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg.bench.scale import percentiles
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

QUESTIONS = [
    "which tea does the user prefer",
    "where does the user's sister live",
    "what is the user's dog called",
    "where does the user work",
]
FACTS = [
    "I prefer green tea over coffee",
    "My sister Lena lives in Lisbon",
    "My dog is called Bruno",
    "I work as a nurse at the Charite in Berlin",
]
CITIES = "Lisbon Oslo Quito Hanoi Lagos Perth Cusco Dakar Riga Tunis Accra Lima".split()
SUBJECTS = "geology music law botany chemistry poetry dance physics nursing".split()
GAP_S = 0.05  # between b's turns: a chat, not a flood


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


def big_turns(sizes: list[int]) -> None:
    print("messages  small-tenant delay s  big turn via worker s  big turn alone s")
    for n in sizes:
        delay, worker, alone = measure(n)
        print(f"{n:8d}  {delay:20.2f}  {worker:21.2f}  {alone:16.2f}")


# -- the flood ------------------------------------------------------------------


class Figures:
    """What tenant ``b`` saw in one window."""

    def __init__(self) -> None:
        self.submits: list[float] = []
        self.recalls: list[float] = []
        self.timeouts = 0
        self.searchable: list[float] = []


def tenant_b(
    memory: HindsightMemory, rounds: int, searchable: int, tag: str
) -> Figures:
    """``b``'s turns: submit + recall at the default deadline, then searchable lines."""
    seen = Figures()
    for i in range(rounds):
        started = time.perf_counter()
        memory.submit(f"{tag} note {i}: the receipt goes in folder {i}", namespace="b")
        seen.submits.append(time.perf_counter() - started)
        started = time.perf_counter()
        result = memory.recall(QUESTIONS[i % len(QUESTIONS)], namespace="b")
        seen.recalls.append(time.perf_counter() - started)
        seen.timeouts += result.timed_out
        time.sleep(GAP_S)
    for j in range(searchable):
        name, line = _new_line(tag, j)
        started = time.perf_counter()
        memory.submit(line, namespace="b")
        seen.searchable.append(_until_found(memory, name, line) - started)
    return seen


def _new_line(tag: str, j: int) -> tuple[str, str]:
    """A fact of ``b``'s, unlike the others (none merges into another), and its name."""
    letters = "".join(chr(ord("a") + int(d)) for d in f"{j}")
    name = f"Quill{letters}{tag[0]}o"
    city, subject = CITIES[j % len(CITIES)], SUBJECTS[j % len(SUBJECTS)]
    return name, f"My cousin {name} moved to {city} to study {subject}"


def _until_found(
    memory: HindsightMemory, name: str, line: str, limit_s: float = 120.0
) -> float:
    """When a recall of ``b`` (no deadline) first returns ``line``'s memory."""
    give_up = time.perf_counter() + limit_s
    while time.perf_counter() < give_up:
        result = memory.recall(line, namespace="b", timeout=None)
        if any(name in m.record.content for m in result.memories):
            return time.perf_counter()
        time.sleep(0.01)
    return float("inf")


def flood(n: int, rounds: int, searchable: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        memory = HindsightMemory.from_uri(
            str(Path(tmp) / "fair.db"), embedder="hashing"
        )
        for fact in FACTS:
            memory.capture(fact, namespace="b")
        memory.flush()
        memory.recall(QUESTIONS[0], namespace="b", timeout=None)  # warm
        idle = tenant_b(memory, rounds, searchable, "idle")
        memory.flush()
        stop = threading.Event()
        sent = [0]

        def tenant_a() -> None:
            for i in range(n):
                if stop.is_set():
                    return
                text = f"Note {i}: the parcel Topic{i} goes to Town{i}."
                memory.submit(text, namespace="a")
                sent[0] = i + 1

        flooding = threading.Thread(target=tenant_a, daemon=True)
        flooding.start()
        wanted = min(1000, n // 2)
        deadline = time.perf_counter() + 60
        while memory.worker.pending_for("a") < wanted and flooding.is_alive():
            if time.perf_counter() > deadline:
                break
            time.sleep(0.01)
        before = memory.worker.pending_for("a")
        during = tenant_b(memory, rounds, searchable, "flood")
        after = memory.worker.pending_for("a")
        submitted = sent[0]
        stop.set()
        memory.forget("a")  # ends a's backlog now, not after minutes of capture
        flooding.join()
        memory.close()
    _report(n, idle, during, (before, after, submitted))


def _report(
    n: int, idle: Figures, during: Figures, backlog: tuple[int, int, int]
) -> None:
    print(
        f"tenant b beside tenant a's flood of {n} one-line submits "
        "(Milvus Lite, spool, hashing embedder, recall deadline 0.2 s)"
    )
    print(
        f"a's turns queued in b's window: {backlog[0]} at the start, {backlog[1]} "
        f"at the end ({backlog[2]} of {n} submitted by then)"
    )
    print(f"{'':34s}{'idle':>10s}{'flood':>10s}{'flood/idle':>12s}")
    rows = [
        ("b submit() p50 ms", *_pair(idle.submits, during.submits, 0, 1e3)),
        ("b submit() p95 ms", *_pair(idle.submits, during.submits, 1, 1e3)),
        ("b line searchable p50 s", *_pair(idle.searchable, during.searchable, 0, 1)),
        ("b line searchable max s", max(idle.searchable), max(during.searchable)),
        ("b recall p50 ms", *_pair(idle.recalls, during.recalls, 0, 1e3)),
        ("b recall p95 ms", *_pair(idle.recalls, during.recalls, 1, 1e3)),
    ]
    for name, quiet, busy in rows:
        ratio = busy / quiet if quiet else float("inf")
        print(f"{name:34s}{quiet:10.3f}{busy:10.3f}{ratio:12.1f}")
    print(
        f"{'b recalls past the deadline':34s}{idle.timeouts:>5d}/{len(idle.recalls):<4d}"
        f"{during.timeouts:>5d}/{len(during.recalls):<4d}"
    )


def _pair(
    idle: list[float], busy: list[float], which: int, scale: float
) -> tuple[float, float]:
    return percentiles(idle)[which] * scale, percentiles(busy)[which] * scale


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sizes", nargs="*", type=int, help="big-turn sizes (messages)")
    ap.add_argument("--flood", type=int, help="tenant a's one-line submits")
    ap.add_argument("--rounds", type=int, default=21, help="b's submit+recall turns")
    ap.add_argument("--searchable", type=int, default=5, help="b's lines polled")
    args = ap.parse_args()
    if args.flood:
        flood(args.flood, args.rounds, args.searchable)
    else:
        big_turns(args.sizes or [500, 1000, 2000])


if __name__ == "__main__":
    main()
