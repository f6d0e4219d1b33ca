"""Recall latency against one raw filtered Milvus search, measured in the same run.

Builds N synthetic memories over 100 namespaces in a Milvus Lite file (reused
on later runs), warms each namespace once, then alternates full recalls,
recalls without the second hop (``Policy(hop_docs=0)``) and raw filtered
top-20 dense searches on the same namespaces and prints p50/p95 and the
ratios. Query embedding is excluded (vectors are computed before timing).
``--uri`` builds on a Milvus server instead, in collections under a fresh
prefix that are dropped afterwards.

    OMP_NUM_THREADS=1 python benchmarks/recall_latency.py --sizes 10000,100000
    OMP_NUM_THREADS=1 python benchmarks/recall_latency.py --sizes 2000 \
        --uri http://127.0.0.1:19530
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np

from hindsight_lg import HindsightMemory, MemoryRecord, Policy
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.model import Edge, EdgeType, Kind
from hindsight_lg.testing import HashingEmbedder

WORDS = (
    "hiking berlin redis tea coffee paris lisbon wedding flight project launch "
    "dog cat sister brother music guitar painting book movie garden kitchen "
    "budget meeting doctor school birthday concert"
).split()
NAMESPACES = 100


class PrecomputedEmbedder:
    """Serves query vectors computed before timing, so embedding is excluded."""

    def __init__(self, inner: HashingEmbedder) -> None:
        self.inner, self.dim, self.model_id = inner, inner.dim, inner.model_id
        self.cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in texts if t not in self.cache]
        for t, v in zip(missing, self.inner.embed(missing), strict=True):
            self.cache[t] = v
        return np.stack([self.cache[t] for t in texts])


def build(
    path: Path, size: int, emb: HashingEmbedder, uri: str | None, prefix: str
) -> MilvusBackend:
    fresh = uri is not None or not path.exists()
    backend = MilvusBackend(uri or str(path), prefix=prefix)
    backend.setup(dim=emb.dim, model_id=emb.model_id)
    if not fresh:
        return backend
    rng = random.Random(size)
    started = time.perf_counter()
    for ns in range(NAMESPACES):
        texts = [
            " ".join(rng.choices(WORDS, k=8)) + f" note {i}"
            for i in range(size // NAMESPACES)
        ]
        records = [
            MemoryRecord(
                namespace=f"ns{ns}",
                content=t,
                dense=v.tolist(),
                kind=Kind.FACT,
                event_time=1.7e9 + rng.random() * 3e7,
                entities=[rng.choice(["Anna", "Tom", "Berlin"])],
            )
            for t, v in zip(texts, emb.embed(texts), strict=True)
        ]
        backend.upsert(f"ns{ns}", records)
        backend.add_edges(
            f"ns{ns}",
            [
                Edge(f"ns{ns}", a.id, b.id, EdgeType.PRECEDES, 0.5)
                for a, b in zip(records, records[1:], strict=False)
            ],
        )
        print(
            f"\r  building {size}: namespace {ns + 1}/{NAMESPACES}", end="", flush=True
        )
    backend.flush()
    print(f"  ({time.perf_counter() - started:.0f} s)")
    return backend


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def measure(size: int, rounds: int, folder: Path, uri: str | None = None) -> None:
    emb = HashingEmbedder()
    prefix = f"latency_{uuid.uuid4().hex[:8]}" if uri else "hindsight"
    try:
        backend = build(folder / f"recall-{size}.db", size, emb, uri, prefix)
        _measure(size, rounds, backend, emb)
    finally:
        if uri:
            from hindsight_lg.bench.server_scale import drop_prefix

            drop_prefix(uri, prefix)


def _measure(
    size: int, rounds: int, backend: MilvusBackend, emb: HashingEmbedder
) -> None:
    fast = PrecomputedEmbedder(emb)
    memory = HindsightMemory(backend, fast)
    no_hop = HindsightMemory(backend, fast, policy=Policy(hop_docs=0))
    rng = random.Random(7)
    queries = [" ".join(rng.choices(WORDS, k=4)) for _ in range(rounds)]
    fast.embed(queries)
    for ns in range(NAMESPACES):  # warm: the first read of a namespace loads it
        memory.recall(queries[0], namespace=f"ns{ns}", timeout=None)
    recall_ms: list[float] = []
    flat_ms: list[float] = []
    raw_ms: list[float] = []
    for q in queries:
        ns = f"ns{rng.randrange(NAMESPACES)}"
        vec = fast.cache[q].tolist()
        raw_ms.append(_time(partial(backend.search_dense, ns, vec, Where(), limit=20)))
        recall_ms.append(_time(partial(memory.recall, q, namespace=ns, timeout=None)))
        flat_ms.append(_time(partial(no_hop.recall, q, namespace=ns, timeout=None)))
    (r50, r95), (s50, s95) = percentiles(recall_ms), percentiles(raw_ms)
    f50, f95 = percentiles(flat_ms)
    print(
        f"{size:>7} | recall p50 {r50:6.1f} ms p95 {r95:6.1f} ms | without hop p50 "
        f"{f50:6.1f} ms p95 {f95:6.1f} ms | raw search p50 {s50:6.1f} ms p95 "
        f"{s95:6.1f} ms | p95 ratio {r95 / s95:4.2f} ({f95 / s95:4.2f} without hop)"
    )
    no_hop.close()
    memory.close()
    backend.close()


def _time(fn: Callable[[], object]) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--out", default="bench-out")
    parser.add_argument("--uri", help="a Milvus server (http://host:19530)")
    args = parser.parse_args()
    folder = Path(args.out)
    folder.mkdir(parents=True, exist_ok=True)
    for size in (int(s) for s in args.sizes.split(",")):
        measure(size, args.rounds, folder, args.uri)


if __name__ == "__main__":
    main()
