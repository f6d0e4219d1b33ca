"""Scale: capture throughput and recall latency at 1k/10k/100k memories, Milvus Lite.

For each size, the first captures go through the public :meth:`capture` API
(their rate is the capture throughput); the rest are bulk-loaded as records
so that 100k memories build in minutes. Recalls then alternate with a raw
filtered Milvus search on the same namespace, in the same run, as reference.
Per-path latency is the time recall spends in each kind of store call.
"""

from __future__ import annotations

import random
import resource
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from hindsight_lg.backends.base import Where
from hindsight_lg.bench.report import plot_lines
from hindsight_lg.bench.runner import machine
from hindsight_lg.model import Edge, EdgeType, Kind, MemoryRecord

WORDS = (
    "hiking berlin redis tea coffee paris lisbon wedding flight project launch dog "
    "cat sister brother music guitar painting book movie garden kitchen budget "
    "meeting doctor school birthday concert pottery camping"
).split()
NAMES = ("Anna", "Tom", "Lena", "Omar", "Mei", "Ravi")
# Which recall path each store call serves (lexical also runs the entity probe).
PATH_OF = {
    "search_dense": "dense",
    "search_lexical": "lexical",
    "query": "recency/time",
    "edges": "graph",
    "get": "graph",
}


@dataclass(frozen=True, slots=True)
class ScaleConfig:
    """Sizes, namespaces, recalls per size, embedder, report folder."""

    sizes: tuple[int, ...] = (1000, 10000)
    namespaces: int = 100
    queries: int = 200
    embedder: str = "hashing"
    out: Path = Path("bench-out/scale")
    captures: int = 500


@dataclass(slots=True)
class ScaleRow:
    """What one size measured."""

    size: int
    capture_per_s: float = 0.0
    submit_per_s: float = 0.0
    recall: tuple[float, float] = (0.0, 0.0)
    raw: tuple[float, float] = (0.0, 0.0)
    paths: dict[str, tuple[float, float]] = field(default_factory=dict)
    peak_rss_mb: float = 0.0
    disk_mb: float = 0.0


class TimedBackend:
    """Forwards to a backend and adds each call's time to the path it serves."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.spent: dict[str, float] = defaultdict(float)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        path = PATH_OF.get(name)
        if path is None or not callable(attr):
            return attr

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return attr(*args, **kwargs)
            finally:
                self.spent[path] += (time.perf_counter() - start) * 1000

        return timed


def sentence(rng: random.Random, i: int) -> str:
    """A synthetic turn: a name, a handful of topic words and a serial number."""
    return (
        f"{rng.choice(NAMES)} talked about "
        + " ".join(rng.choices(WORDS, k=7))
        + f" (note {i})"
    )


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p95 of ``samples``."""
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def _capture(memory: Any, n: int, namespaces: int, rng: random.Random) -> float:
    start = time.perf_counter()
    for i in range(n):
        ns = f"ns{i % namespaces}"
        memory.capture(sentence(rng, i), namespace=ns, speaker="user")
    return n / (time.perf_counter() - start)


def _submit(memory: Any, n: int, namespaces: int, rng: random.Random) -> float:
    # The turn's path only queues; the rate counts until the worker has written all.
    start = time.perf_counter()
    for i in range(n):
        ns = f"ns{i % namespaces}"
        memory.submit(sentence(rng, i), namespace=ns, speaker="user")
    memory.flush()
    return n / (time.perf_counter() - start)


def _bulk(
    memory: Any, start: int, size: int, namespaces: int, rng: random.Random
) -> None:
    per_ns: dict[str, list[str]] = defaultdict(list)
    for i in range(start, size):
        per_ns[f"ns{i % namespaces}"].append(sentence(rng, i))
    for ns, texts in per_ns.items():
        vectors = memory.embedder.embed(texts)
        records = [
            MemoryRecord(
                namespace=ns,
                content=t,
                summary=t,
                dense=[float(x) for x in v],
                kind=Kind.FACT,
                event_time=1.7e9 + rng.random() * 3e7,
                entities=[t.split()[0]],
                participants=["user"],
            )
            for t, v in zip(texts, vectors, strict=True)
        ]
        memory.backend.upsert(ns, records)
        edges = [
            Edge(ns, a.id, b.id, EdgeType.PRECEDES, 0.5)
            for a, b in zip(records, records[1:], strict=False)
        ]
        memory.backend.add_edges(ns, edges)
    memory.backend.flush()


def _time(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _recalls(
    memory: Any, raw: Any, timed: TimedBackend, cfg: ScaleConfig, row: ScaleRow
) -> None:
    rng = random.Random(7)
    queries = [
        f"what did {rng.choice(NAMES)} say about {rng.choice(WORDS)}?"
        for _ in range(cfg.queries)
    ]
    vectors = {
        q: [float(x) for x in v]
        for q, v in zip(queries, memory.embedder.embed(queries), strict=True)
    }
    for i in range(cfg.namespaces):  # the first read of a namespace loads it
        memory.recall(queries[0], namespace=f"ns{i}", timeout=None)
    totals, raws, per_path = [], [], defaultdict(list)
    for q in queries:
        ns = f"ns{rng.randrange(cfg.namespaces)}"
        raws.append(_time(partial(raw.search_dense, ns, vectors[q], Where(), limit=20)))
        timed.spent.clear()
        totals.append(_time(partial(memory.recall, q, namespace=ns, timeout=None)))
        for path in set(PATH_OF.values()):
            per_path[path].append(timed.spent.get(path, 0.0))
    row.recall, row.raw = percentiles(totals), percentiles(raws)
    row.paths = {p: percentiles(v) for p, v in sorted(per_path.items())}


def _peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        import psutil
    except ImportError:
        return own
    # Milvus Lite serves from a child process: add its resident memory.
    kids = psutil.Process().children(recursive=True)
    return own + float(sum(k.memory_info().rss for k in kids)) / 2**20


def _disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def measure(
    size: int, cfg: ScaleConfig, folder: Path, progress: Callable[[str], None]
) -> ScaleRow:
    """Build ``size`` memories in a fresh Milvus Lite file and time capture and recall."""
    from hindsight_lg import HindsightMemory
    from hindsight_lg.backends.cached import with_read_cache
    from hindsight_lg.backends.milvus import MilvusBackend
    from hindsight_lg.embeddings import embedder_from_name

    row = ScaleRow(size)
    db = folder / f"scale-{size}"
    db.mkdir()
    raw = MilvusBackend(str(db / "memory.db"))
    # Time the engine's own read cache too: wrap it, not the raw store.
    timed = TimedBackend(with_read_cache(raw))
    memory = HindsightMemory(timed, embedder_from_name(cfg.embedder), cache=False)
    rng = random.Random(size)
    try:
        n = min(cfg.captures, size) // 2
        progress(f"{size}: {n} turns through capture(), {n} through submit()")
        row.capture_per_s = _capture(memory, n, cfg.namespaces, rng)
        row.submit_per_s = _submit(memory, n, cfg.namespaces, rng)
        progress(f"{size}: bulk-loading {size - 2 * n} memories")
        _bulk(memory, 2 * n, size, cfg.namespaces, rng)
        progress(f"{size}: {cfg.queries} recalls and raw searches")
        _recalls(memory, raw, timed, cfg, row)
        row.peak_rss_mb = _peak_rss_mb()
    finally:
        memory.close()
    row.disk_mb = _disk_mb(db)
    return row


def run_scale(cfg: ScaleConfig) -> list[ScaleRow]:
    """Measure every size in a temporary folder (removed afterwards)."""
    import sys

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="hindsight-scale-") as tmp:
        return [measure(size, cfg, Path(tmp), say) for size in cfg.sizes]


def scale_table(rows: list[ScaleRow]) -> str:
    """Markdown: one row per size, latencies in ms as p50/p95."""
    paths = sorted({p for r in rows for p in r.paths})
    head = [
        "memories",
        "capture() turns/s",
        "submit() turns/s",
        "recall p50/p95",
        "raw search p50/p95",
        "p95 ratio",
    ]
    lines = ["| " + " | ".join(head + paths + ["peak RSS MB", "disk MB"]) + " |"]
    lines.append("|" + "---|" * (len(head) + len(paths) + 2))
    for r in rows:
        cells = [
            f"{r.size:,}",
            f"{r.capture_per_s:.0f}",
            f"{r.submit_per_s:.0f}",
            f"{r.recall[0]:.1f} / {r.recall[1]:.1f}",
            f"{r.raw[0]:.1f} / {r.raw[1]:.1f}",
            f"{r.recall[1] / max(r.raw[1], 1e-9):.2f}",
            *(f"{r.paths[p][0]:.1f} / {r.paths[p][1]:.1f}" for p in paths),
            f"{r.peak_rss_mb:.0f}",
            f"{r.disk_mb:.1f}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_scale_report(
    cfg: ScaleConfig, rows: list[ScaleRow], command: str
) -> tuple[Path, str]:
    """Markdown report and latency plot in ``cfg.out``; returns (path, table)."""
    cfg.out.mkdir(parents=True, exist_ok=True)
    table = scale_table(rows)
    series = {
        "recall p95": [(r.size, r.recall[1]) for r in rows],
        "recall p50": [(r.size, r.recall[0]) for r in rows],
        "raw search p95": [(r.size, r.raw[1]) for r in rows],
    }
    plot_lines(
        series,
        cfg.out / "latency.png",
        title="Recall latency against size (Milvus Lite)",
        xlabel="memories",
        ylabel="ms",
        logx=True,
    )
    text = "\n".join(
        [
            "# Scale: capture and recall on Milvus Lite",
            "",
            f"Command: `{command}`  ",
            f"Machine: {machine()}  ",
            f"Embedder: {cfg.embedder}; namespaces: {cfg.namespaces}; recalls per size: "
            f"{cfg.queries}; the first {cfg.captures} memories of each size are captured, "
            "half through capture() (synchronous), half through submit() (queued, "
            "timed until flush() returns); the rest are bulk-loaded records",
            "",
            table,
            "",
            "Latencies in ms (p50 / p95). Per-path columns: time recall spends in that path's store calls.",
            "",
            "![latency](latency.png)",
        ]
    )
    report = cfg.out / "report.md"
    report.write_text(text + "\n", encoding="utf-8")
    return report, table
