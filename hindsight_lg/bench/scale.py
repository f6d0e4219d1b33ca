"""Scale: capture throughput and recall latency at 1k/10k/100k memories, Milvus Lite.

For each size, the first captures go through the public API, a third each
through :meth:`capture` one turn per call, :meth:`capture` with ``batch``
turns per call, and :meth:`submit` (queued, timed until :meth:`flush`
returns); their rates are the capture throughput. The store is opened as
``from_uri`` opens a Lite file (with the capture spool). The rest is
bulk-loaded as records so that 100k memories build in minutes. Recalls then
alternate with a raw filtered Milvus search on the same namespace, in the same
run, as reference. Per-path latency is the time recall spends in each kind of
store call (served from the read cache where it can be).

One more row holds ``single`` memories in one namespace, and the CLI section
times commands that embed nothing against ``import hindsight_lg``
(:mod:`hindsight_lg.bench.startup`). :func:`targets` turns all of it into the
project's performance targets, each with its ratio.
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

from hindsight_lg.backends import ForwardingBackend, MemoryBackend, Where
from hindsight_lg.bench._stages import ClockedEmbedder, StageClock, Stages
from hindsight_lg.bench.startup import Startup, measure_startup
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
    """Sizes, namespaces, recalls per size, embedder, report folder.

    ``single`` is the size of the one-namespace row (0: none); ``cli`` times
    the CLI start-up too; ``batch`` is the turns per batched capture call.
    """

    sizes: tuple[int, ...] = (1000, 10000)
    namespaces: int = 100
    queries: int = 200
    embedder: str = "hashing"
    out: Path = Path("bench-out/scale")
    captures: int = 600
    single: int = 10000
    cli: bool = True
    batch: int = 20
    # A second recall pass with the read cache bounded to hold every tenant
    # (a tuned variant, beside the defaults), where the default bound did not.
    held_pass: bool = False


@dataclass(slots=True)
class ScaleRow:
    """What one size measured."""

    size: int
    namespaces: int = 1
    capture_per_s: float = 0.0
    batched_per_s: float = 0.0
    submit_per_s: float = 0.0
    model_per_s: float = 0.0
    recall: tuple[float, float] = (0.0, 0.0)
    raw: tuple[float, float] = (0.0, 0.0)
    paths: dict[str, tuple[float, float]] = field(default_factory=dict)
    peak_rss_mb: float = 0.0
    cache_mb: float = 0.0
    disk_mb: float = 0.0
    # The held pass (ScaleConfig.held_pass): recall and raw p50/p95, cache MB.
    held: tuple[tuple[float, float], tuple[float, float], float] | None = None
    # Per capture mode: its stages, and the model alone on its texts, turns/s
    # (one call per turn; per ``batch`` turns for "batched").
    stages: dict[str, Stages] = field(default_factory=dict)
    model_alone: dict[str, float] = field(default_factory=dict)


@dataclass(slots=True)
class ScaleRun:
    """Every row, and the CLI start-up when it was measured."""

    rows: list[ScaleRow]
    startup: Startup | None = None


class TimedBackend(ForwardingBackend):
    """Forwards to a backend; adds each call's time to the path it serves.

    With a ``clock``, every read and write also goes on it, by the thread
    that made it (see :mod:`hindsight_lg.bench._stages`).
    """

    def __init__(self, inner: MemoryBackend, clock: StageClock | None = None) -> None:
        super().__init__(inner)
        self.spent: dict[str, float] = defaultdict(float)
        self.clock = clock

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        stage = self.clock.store_call(name) if self.clock is not None else None
        if stage is not None and self.clock is not None:
            with self.clock.timed(stage):
                return self._paths(name, *args, **kwargs)
        return self._paths(name, *args, **kwargs)

    def _paths(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        path = PATH_OF.get(name)
        if path is None:
            return super()._forward(name, *args, **kwargs)
        start = time.perf_counter()
        try:
            return super()._forward(name, *args, **kwargs)
        finally:
            self.spent[path] += (time.perf_counter() - start) * 1000


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


def _rate(n: int, run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    return n / (time.perf_counter() - start)


def _capture(memory: Any, n: int, namespaces: int, rng: random.Random) -> None:
    for i in range(n):
        ns = f"ns{i % namespaces}"
        memory.capture(sentence(rng, i), namespace=ns, speaker="user")


def _batched(
    memory: Any, n: int, namespaces: int, rng: random.Random, batch: int
) -> None:
    for call, start in enumerate(range(0, n, batch)):
        turns = [
            {"role": "user", "content": sentence(rng, i)}
            for i in range(start, min(n, start + batch))
        ]
        memory.capture(turns, namespace=f"ns{call % namespaces}")


def _submit(memory: Any, n: int, namespaces: int, rng: random.Random) -> float:
    """Submit ``n`` turns, then flush; returns the seconds the flush waited."""
    # The turn's path only queues; the rate counts until the worker has written all.
    for i in range(n):
        ns = f"ns{i % namespaces}"
        memory.submit(sentence(rng, i), namespace=ns, speaker="user")
    start = time.perf_counter()
    memory.flush()
    return time.perf_counter() - start


def _model_rate(memory: Any, n: int, rng: random.Random) -> float:
    """The embedder alone, one text per call: what capture is bound by."""
    texts = [sentence(rng, i) for i in range(n)]
    memory.embedder.embed(texts[:1])  # a lazily loaded model loads here
    return _rate(n, lambda: [memory.embedder.embed([t]) for t in texts])


def bulk_load(
    memory: Any, start: int, size: int, namespaces: int, rng: random.Random
) -> None:
    """Write records ``start`` to ``size`` straight to the store, in ``namespaces``.

    Generated sentences, embedded in one call per namespace, with a chain of
    ``precedes`` edges: a large store in seconds, without capture's work.
    """
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
    memory: Any,
    raw: Any,
    timed: TimedBackend,
    cfg: ScaleConfig,
    row: ScaleRow,
    *,
    warm_all: bool = True,
) -> None:
    rng = random.Random(7)
    queries = [
        f"what did {rng.choice(NAMES)} say about {rng.choice(WORDS)}?"
        for _ in range(cfg.queries)
    ]
    spaces = [f"ns{rng.randrange(row.namespaces)}" for _ in queries]
    vectors = {
        q: [float(x) for x in v]
        for q, v in zip(queries, memory.embedder.embed(queries), strict=True)
    }
    # The first read of a namespace loads it: every tenant (all of them
    # active, the worst case for the cache), or those the recalls ask.
    warm = [f"ns{i}" for i in range(row.namespaces)] if warm_all else spaces
    for ns in dict.fromkeys(warm):
        memory.recall(queries[0], namespace=ns, timeout=None)
    totals, raws, per_path = [], [], defaultdict(list)
    for q, ns in zip(queries, spaces, strict=True):
        raws.append(_time(partial(raw.search_dense, ns, vectors[q], Where(), limit=20)))
        timed.spent.clear()
        totals.append(_time(partial(memory.recall, q, namespace=ns, timeout=None)))
        for path in set(PATH_OF.values()):
            per_path[path].append(timed.spent.get(path, 0.0))
    row.recall, row.raw = percentiles(totals), percentiles(raws)
    row.paths = {p: percentiles(v) for p, v in sorted(per_path.items())}


def _evicted(cache: Any, namespaces: int) -> bool:
    return int(cache.held()) < namespaces


def _held_recalls(
    memory: Any,
    raw: Any,
    timed: TimedBackend,
    cfg: ScaleConfig,
    row: ScaleRow,
    cache: Any,
) -> tuple[tuple[float, float], tuple[float, float], float]:
    """The recall pass again, with the cache's bounds raised past every tenant.

    The same recalls; only the tenants they ask are loaded first (the rest
    would stay cached, unasked).
    """
    cache.max_total_records = cache.max_cached = 10**9
    cache.bound(1 << 40)
    held = ScaleRow(row.size, namespaces=row.namespaces)
    _recalls(memory, raw, timed, cfg, held, warm_all=False)
    return held.recall, held.raw, cache.nbytes() / 2**20


def _peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    try:
        import psutil
    except ImportError:
        return own
    # Milvus Lite may serve from a child process: add its resident memory.
    kids = psutil.Process().children(recursive=True)
    return own + float(sum(k.memory_info().rss for k in kids)) / 2**20


def _disk_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def _alone(embedder: Any, texts: list[str], per_call: int) -> float:
    """Turns/s of the model alone on ``texts``, ``per_call`` texts a call."""
    calls = [texts[i : i + per_call] for i in range(0, len(texts), per_call)]
    return _rate(len(texts), lambda: [embedder.embed(c) for c in calls])


def _mode(
    memory: Any,
    clock: StageClock,
    row: ScaleRow,
    mode: str,
    run: Callable[[random.Random], float | None],
    seed: int,
    per_call: int,
    n: int,
) -> float:
    """One capture mode, after the model alone on the same turns; returns turns/s."""
    texts = [sentence(random.Random(seed), i) for i in range(n)]
    row.model_alone[mode] = _alone(memory.embedder.inner, texts, per_call)
    clock.reset()
    start = time.perf_counter()
    waited = run(random.Random(seed)) or 0.0
    wall = time.perf_counter() - start
    row.stages[mode] = Stages.of(clock, n, wall, waited)
    return n / wall


def _captures(
    memory: Any, clock: StageClock, cfg: ScaleConfig, row: ScaleRow, seed: int
) -> int:
    n = min(cfg.captures, row.size) // 3
    ns = row.namespaces
    # First, so a lazily loaded model is in memory before capture is timed.
    row.model_per_s = _model_rate(memory, max(n, 20), random.Random(0))
    batch = cfg.batch

    def one(rng: random.Random) -> None:
        _capture(memory, n, ns, rng)

    def batched(rng: random.Random) -> None:
        _batched(memory, n, ns, rng, batch)

    def submitted(rng: random.Random) -> float:
        return _submit(memory, n, ns, rng)

    # The same turns each time (each mode's own seed), after the model alone.
    row.capture_per_s = _mode(memory, clock, row, "capture", one, seed, 1, n)
    row.batched_per_s = _mode(
        memory, clock, row, "batched", batched, seed + 1, batch, n
    )
    row.submit_per_s = _mode(memory, clock, row, "submit", submitted, seed + 2, 1, n)
    return 3 * n


def measure(
    size: int,
    cfg: ScaleConfig,
    folder: Path,
    progress: Callable[[str], None],
    namespaces: int | None = None,
    open_raw: Callable[[Path], Any] | None = None,
) -> ScaleRow:
    """Build ``size`` memories in a fresh store and time capture and recall.

    The store is a fresh Milvus Lite file in ``folder`` unless ``open_raw``
    opens another one (a server's collections under a fresh prefix, say);
    the capture spool always lives in ``folder``.
    """
    from hindsight_lg import HindsightMemory
    from hindsight_lg.backends import CachedBackend, with_read_cache
    from hindsight_lg.backends.milvus import MilvusBackend
    from hindsight_lg.embeddings import embedder_from_name

    row = ScaleRow(size, namespaces=namespaces or cfg.namespaces)
    db = folder / f"scale-{size}-{row.namespaces}"
    db.mkdir(mode=0o700)  # in a private temporary folder; see hindsight_lg._files
    raw = open_raw(db) if open_raw else MilvusBackend(str(db / "memory.db"))
    # Time the engine's own read cache too: wrap it, not the raw store.
    cache = with_read_cache(raw)
    clock = StageClock()
    timed = TimedBackend(cache, clock)
    memory = HindsightMemory(
        timed,
        ClockedEmbedder(embedder_from_name(cfg.embedder), clock),
        cache=False,
        spool=str(db / "memory.db.spool"),  # as from_uri opens a Lite file
    )
    rng = random.Random(size)
    try:
        progress(f"{size} in {row.namespaces} namespaces: capture")
        done = _captures(memory, clock, cfg, row, size)
        timed.clock = None  # recall is timed by path
        progress(f"{size} in {row.namespaces}: bulk-loading {size - done} memories")
        bulk_load(memory, done, size, row.namespaces, rng)
        progress(f"{size} in {row.namespaces}: {cfg.queries} recalls and raw searches")
        _recalls(memory, raw, timed, cfg, row)
        row.peak_rss_mb = _peak_rss_mb()
        if isinstance(cache, CachedBackend):
            row.cache_mb = cache.nbytes() / 2**20
            if cfg.held_pass and _evicted(cache, row.namespaces):
                progress(f"{size}: again, the read cache bounded to hold every tenant")
                row.held = _held_recalls(memory, raw, timed, cfg, row, cache)
    finally:
        memory.close()
    row.disk_mb = _disk_mb(db)
    return row


def run_scale(
    cfg: ScaleConfig, progress: Callable[[str], None] | None = None
) -> ScaleRun:
    """Measure every size in a temporary folder (removed afterwards)."""
    import sys

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    say_ = progress or say
    with tempfile.TemporaryDirectory(prefix="hindsight-scale-") as tmp:
        rows = [measure(size, cfg, Path(tmp), say_) for size in cfg.sizes]
        if cfg.single:
            rows.append(measure(cfg.single, cfg, Path(tmp), say_, namespaces=1))
        startup = measure_startup(Path(tmp), say_) if cfg.cli else None
    return ScaleRun(rows, startup)
