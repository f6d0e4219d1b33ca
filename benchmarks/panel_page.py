"""The memory panel's namespace page at 10k memories on Milvus Lite.

N memories (8 kinds, mixed statuses, distinct event times) are bulk-loaded
into one namespace of a fresh Milvus Lite file. The panel app then serves,
through Starlette's test client (routing, guard middleware, engine calls,
Jinja2 rendering; no socket), and each request is timed:

- the namespace page (counts by kind and status, one group per kind),
- one kind's first page and a page 20 cursors deep,
- the JSON list API's first page,

against a plain ``memory.list_memories(namespace)`` call (its default limit,
1000 rows) in the same run, on the same warm engine. Both are also timed right
after the engine's read cache is dropped ("cold"): the first read of a
namespace loads it into that cache, whoever makes it (a recall, a list, the
panel), and that load dominates a cold request.

    OMP_NUM_THREADS=1 python benchmarks/panel_page.py
    python benchmarks/panel_page.py --memories 20000 --repeat 30
"""

from __future__ import annotations

import argparse
import math
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory, Kind, MemoryRecord, Status
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.panel import create_app
from hindsight_lg.testing import HashingEmbedder

NAMESPACE = "bench-user"
STATUSES = [Status.ACTIVE] * 7 + [Status.COLD, Status.SUPERSEDED, Status.ARCHIVED]


def load(memory: HindsightMemory, n: int, batch: int = 1000) -> None:
    """Write ``n`` synthetic memories straight to the store, in batches."""
    rng = np.random.default_rng(7)
    kinds = list(Kind)
    start = 1.7e9
    for lo in range(0, n, batch):
        vectors = rng.standard_normal((min(batch, n - lo), memory.embedder.dim))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        records = [
            MemoryRecord(
                namespace=NAMESPACE,
                content=f"memory {i}: Maya mentioned topic {i % 97} in Berlin",
                kind=kinds[i % len(kinds)],
                status=STATUSES[i % len(STATUSES)],
                event_time=start + 60.0 * i,
                created_at=start + 60.0 * i,
                participants=["Maya"],
                thread_id=f"t-{i % 50}",
                dense=[float(x) for x in vec],
            )
            for i, vec in zip(range(lo, lo + len(vectors)), vectors, strict=True)
        ]
        memory.backend.upsert(NAMESPACE, records)
    memory.backend.flush()


def timed(call: Callable[[], object], repeat: int) -> list[float]:
    """Wall-clock seconds of ``repeat`` calls."""
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        out.append(time.perf_counter() - t0)
    return out


def get(client: TestClient, url: str) -> Callable[[], object]:
    """A call that fetches ``url`` and checks it succeeded."""

    def call() -> object:
        resp = client.get(url)
        assert resp.status_code == 200, resp.text[:300]
        return resp

    return call


def cold(
    memory: HindsightMemory, call: Callable[[], object], repeat: int
) -> list[float]:
    """Seconds of ``call`` right after the engine's read cache is dropped."""
    out = []
    for _ in range(repeat):
        memory.backend.invalidate()  # type: ignore[attr-defined]
        out += timed(call, 1)
    return out


def deep_cursor(client: TestClient, pages: int) -> float:
    """The cursor ``pages`` pages into the fact memories."""
    cursor = None
    for _ in range(pages):
        url = f"/api/memories?namespace={NAMESPACE}&kind=fact&status=all"
        body = client.get(url + (f"&before={cursor!r}" if cursor else "")).json()
        cursor = body["next"]
    assert cursor is not None
    return float(cursor)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--cold", type=int, default=2, help="cold-cache repeats")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        backend = MilvusBackend(str(Path(tmp) / "panel.db"))
        memory = HindsightMemory(backend, HashingEmbedder(), owns_backend=True)
        t0 = time.perf_counter()
        load(memory, args.memories)
        print(f"loaded {args.memories} memories in {time.perf_counter() - t0:.1f} s")
        client = TestClient(create_app(memory), base_url="http://127.0.0.1")
        page = f"/memories?namespace={NAMESPACE}"
        cold_rows = {
            "cold: list_memories()": cold(
                memory, lambda: memory.list_memories(NAMESPACE), args.cold
            ),
            "cold: namespace page": cold(memory, get(client, page), args.cold),
        }
        deep = deep_cursor(client, 20)
        rows = {
            "list_memories() (1000 rows)": timed(
                lambda: memory.list_memories(NAMESPACE), args.repeat
            ),
            "namespace page (grouped)": timed(get(client, page), args.repeat),
            "one kind, first page": timed(
                get(client, page + "&kind=fact&status=all"), args.repeat
            ),
            "one kind, 20 pages deep": timed(
                get(client, page + f"&kind=fact&status=all&before={deep!r}"),
                args.repeat,
            ),
            "JSON API, first page": timed(
                get(client, f"/api/memories?namespace={NAMESPACE}"), args.repeat
            ),
        }
        print(f"{'request':<32}{'p50 ms':>9}{'p95 ms':>9}")
        for name, samples in {**cold_rows, **rows}.items():
            p50 = statistics.median(samples) * 1000
            p95 = sorted(samples)[math.ceil(0.95 * len(samples)) - 1] * 1000
            print(f"{name:<32}{p50:>9.1f}{p95:>9.1f}")
        base = statistics.median(rows["list_memories() (1000 rows)"])
        ratio = statistics.median(rows["namespace page (grouped)"]) / base
        print(f"namespace page / list_memories: {ratio:.2f}x (warm)")
        cold_ratio = statistics.median(
            cold_rows["cold: namespace page"]
        ) / statistics.median(cold_rows["cold: list_memories()"])
        print(f"namespace page / list_memories: {cold_ratio:.2f}x (cold cache)")
        memory.close()


if __name__ == "__main__":
    main()
