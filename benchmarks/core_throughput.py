"""Capture throughput and recall latency of the core engine on Milvus Lite.

Capture: synthetic user turns (English and Chinese, several events each) go
through the full write path (split, classify, salience, embed, merge/supersede
search, upsert, edges, audit, flush) into a fresh Milvus Lite file, one
``capture()`` call per turn ("per-turn") or one call per 50 turns ("batch").
Figures are turns/s and events/s (memories written or merged per second).
Per-turn capture is measured twice: with the capture spool and group commit
(the default for a Lite file: acknowledged once fsync'd in the spool, the
store written and flushed in batches) and without a spool (``spool=None``:
every call flushes the store). "model" replays the exact embedding calls the
group-commit run made, on the model alone: the speed the model allows, and
the ratio capture/model says how close capture comes to it.

Recall: N memories are bulk-loaded into one namespace (embedded in batches),
then each query is recalled with ``timeout=None``; p50/p95 are reported with
the query's embedding excluded (vectors computed before timing) and included.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/core_throughput.py
    python benchmarks/core_throughput.py --embedders hashing --memories 2000
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hindsight_lg import HindsightMemory, MemoryRecord
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.embeddings import Embedder, embedder_from_name
from hindsight_lg.embeddings.base import QueriesOf, Vectors
from hindsight_lg.memory._coalesce import CoalescingEmbedder
from hindsight_lg.memory.language.encode import classify, entities
from hindsight_lg.memory.policy import Policy

NAMES = "Maya Lena Tom Aiko Ravi Sofia Jonas Mei Omar Clara".split()
PLACES = "Berlin Lisbon Paris Kyoto Austin Oslo Lima Seoul Cairo Porto".split()
THINGS = (
    "Redis Postgres hiking tea coffee jazz chess sushi yoga kayaking pottery "
    "Kubernetes gardening salsa marathons"
).split()
EN = [
    "I really like {t} these days. My friend {n} got me into it in {p}.",
    "Remind me to call {n} about the trip to {p} next Friday.",
    "I don't like {t} anymore, it got boring. Also {n} moved to {p}.",
    "My sister {n} works in {p} as a nurse. She loves {t}.",
    "From now on, always answer in short bullet points about {t}.",
    "I'm feeling stressed about the {t} project launch with {n}.",
    "We had dinner in {p} with {n} last week, and talked about {t}.",
]
ZH = [
    "我下周三要去{p}出差，记得提醒我带伞。",
    "我最近很喜欢{t}，{n}也一起去。",
    "帮我查一下{p}明天的天气，另外我想约{n}吃饭。",
]


def turns(n: int, seed: int) -> list[str]:
    """``n`` varied user turns, one in four Chinese."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        template = rng.choice(ZH if i % 4 == 3 else EN)
        out.append(
            template.format(
                n=rng.choice(NAMES), p=rng.choice(PLACES), t=rng.choice(THINGS)
            )
            + f" (note {i})"
        )
    return out


class Precomputed:
    """Serves vectors computed before timing, so query embedding is excluded.

    Recall embeds the query as the user would ask it, not always word for
    word: a text first seen is embedded then and kept (the warm-up pass
    over every query fills the cache before the timed pass).
    """

    def __init__(self, inner: Embedder, texts: Sequence[str]) -> None:
        self.inner, self.dim, self.model_id = inner, inner.dim, inner.model_id
        self.cache = dict(zip(texts, inner.embed(list(texts)), strict=True))

    def embed(self, texts: Sequence[str]) -> Vectors:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.embed(missing), strict=True))
        return np.stack([self.cache[t] for t in texts]).astype(np.float32)


class Recording:
    """Passes embedding calls through and records their texts."""

    def __init__(self, inner: Embedder) -> None:
        self.inner, self.dim, self.model_id = inner, inner.dim, inner.model_id
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


def open_memory(folder: Path, name: str, embedder: Embedder) -> HindsightMemory:
    tag = "".join(ch if ch.isalnum() else "-" for ch in embedder.model_id)
    backend = MilvusBackend(str(folder / f"{name}-{tag}.db"))
    # Consolidation would run in the background mid-measurement; keep it out.
    policy = Policy(consolidate_every=0)
    return HindsightMemory(backend, embedder, policy=policy, owns_backend=True)


def capture_rate(
    folder: Path, embedder: Embedder, texts: list[str], batch: int
) -> tuple[float, float]:
    """(turns/s, events/s) capturing ``texts`` ``batch`` turns per call, no spool."""
    with open_memory(folder, f"capture-{batch}", embedder) as memory:
        memory.capture("warm-up turn about Berlin", namespace="warm")
        events, t0 = 0, time.perf_counter()
        for i in range(0, len(texts), batch):
            chunk = texts[i : i + batch]
            payload: str | list[dict[str, str]] = (
                chunk[0]
                if batch == 1
                else [{"role": "user", "content": t} for t in chunk]
            )
            events += len(memory.capture(payload, namespace="bench"))
        seconds = time.perf_counter() - t0
    return len(texts) / seconds, events / seconds


def group_commit_rate(
    folder: Path, embedder: Embedder, texts: list[str]
) -> tuple[float, float]:
    """(capture turns/s, model-alone turns/s), one turn per call, interleaved.

    The store is opened as ``from_uri`` opens a Lite file (capture spool,
    group commit); capture time includes the final flush. After each capture,
    the embedding calls it made are replayed on the model alone and timed
    apart, so both figures see the same load on a shared machine.
    """
    tag = "".join(ch if ch.isalnum() else "-" for ch in embedder.model_id)
    recording = Recording(embedder)
    policy = Policy(consolidate_every=0)
    memory = HindsightMemory.from_uri(
        str(folder / f"group-{tag}.db"), embedder=recording, policy=policy
    )
    with memory:
        memory.capture("warm-up turn about Berlin", namespace="warm")
        memory.flush()
        captured = modelled = 0.0
        for text in texts:
            made = len(recording.calls)
            t0 = time.perf_counter()
            memory.capture(text, namespace="bench")
            t1 = time.perf_counter()
            for call in recording.calls[made:]:
                embedder.embed(call)
            captured += t1 - t0
            modelled += time.perf_counter() - t1
        t0 = time.perf_counter()
        memory.flush()
        captured += time.perf_counter() - t0
    return len(texts) / captured, len(texts) / modelled


def bulk_load(memory: HindsightMemory, n: int, embedder: Embedder) -> float:
    """Load ``n`` memories into namespace ``bench``; returns seconds taken."""
    texts = turns(n, seed=7)
    t0 = time.perf_counter()
    base = 1_700_000_000.0
    for i in range(0, n, 500):
        chunk = texts[i : i + 500]
        vectors = embedder.embed(chunk)
        records = [
            MemoryRecord(
                namespace="bench",
                content=t,
                kind=classify(t),
                entities=entities(t),
                dense=[float(x) for x in v],
                event_time=base + (i + j) * 600.0,
            )
            for j, (t, v) in enumerate(zip(chunk, vectors, strict=True))
        ]
        memory.backend.upsert("bench", records)
    memory.backend.flush()
    return time.perf_counter() - t0


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(p50, p95) in milliseconds."""
    qs = statistics.quantiles(samples, n=20, method="inclusive")
    return statistics.median(samples) * 1000, qs[18] * 1000


def recall_latency(
    folder: Path, embedder: Embedder, n: int, queries: list[str]
) -> dict[str, tuple[float, float]]:
    """p50/p95 of recall at ``n`` memories, query embedding excluded and included."""
    pre = Precomputed(embedder, queries)
    out: dict[str, tuple[float, float]] = {}
    with open_memory(folder, "recall", pre) as memory:  # type: ignore[arg-type]
        load = bulk_load(memory, n, embedder)
        print(f"  loaded {n} memories in {load:.1f}s ({n / load:.0f}/s)")
        for mode, emb in (("excluded", pre), ("included", embedder)):
            # The searcher embeds queries through its own batched view.
            searcher = memory._parts().searcher
            searcher.embedder = emb  # type: ignore[assignment]
            searcher.queries = CoalescingEmbedder(QueriesOf(emb))  # type: ignore[arg-type]
            for q in queries:  # warm caches, the Lite segment, the vectors
                memory.recall(q, namespace="bench", timeout=None)
            samples = []
            for q in queries:
                t0 = time.perf_counter()
                memory.recall(q, namespace="bench", timeout=None)
                samples.append(time.perf_counter() - t0)
            out[mode] = percentiles(samples)
    return out


QUESTIONS = [
    "What does the user think about {t}?",
    "Who lives in {p}?",
    "What did {n} do last week?",
    "{n}在{p}做什么？",
    "What should I remind the user about?",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", default="hashing,minilm")
    parser.add_argument("--turns", type=int, default=200, help="turns per capture run")
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(3)
    queries = [
        rng.choice(QUESTIONS).format(
            n=rng.choice(NAMES), p=rng.choice(PLACES), t=rng.choice(THINGS)
        )
        + f" #{i}"
        for i in range(args.queries)
    ]
    rows = []
    groups: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in args.embedders.split(","):
            embedder = embedder_from_name(name)
            texts = turns(args.turns, seed=1)
            print(f"{name}: capturing {len(texts)} turns ...")
            grouped, model = group_commit_rate(folder, embedder, texts)
            per_turn = capture_rate(folder, embedder, texts, batch=1)
            batched = capture_rate(folder, embedder, texts, batch=50)
            print(
                f"  per-turn, group commit {grouped:.1f} turns/s; model alone "
                f"{model:.1f} turns/s; ratio {grouped / model:.2f}"
            )
            groups.append((name, grouped, model))
            print(f"{name}: recall at {args.memories} memories ...")
            print(f"  per-turn {per_turn}, batch {batched} (turns/s, events/s)")
            lat = recall_latency(folder, embedder, args.memories, queries)
            print(f"  recall p50/p95 ms {lat}")
            rows.append((name, per_turn, batched, lat))
    print(
        f"\n{'embedder':<9} {'per-turn turns/s':>17} {'events/s':>9} "
        f"{'batch turns/s':>14} {'events/s':>9} "
        f"{'recall p50/p95 ms (excl. embed)':>32} {'(incl. embed)':>14}"
    )
    for name, (pt, pe), (bt, be), lat in rows:
        ex, inc = lat["excluded"], lat["included"]
        print(
            f"{name:<9} {pt:>17.1f} {pe:>9.1f} {bt:>14.1f} {be:>9.1f} "
            f"{ex[0]:>22.1f} / {ex[1]:<7.1f} {inc[0]:>6.1f} / {inc[1]:.1f}"
        )
    print(
        f"\n{'embedder':<9} {'per-turn, group commit':>23} {'model alone':>12} "
        f"{'ratio':>6}  (turns/s; per-turn above is without a spool)"
    )
    for name, grouped, model in groups:
        print(f"{name:<9} {grouped:>23.1f} {model:>12.1f} {grouped / model:>6.2f}")


if __name__ == "__main__":
    main()
