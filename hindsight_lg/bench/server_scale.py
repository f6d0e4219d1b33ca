"""Scale on a Milvus server: the Lite bench's rows, growth exponents, tenancy.

``hindsight-lg bench scale --uri http://host:19530`` runs
:func:`hindsight_lg.bench.scale.measure` against a server: every size gets
fresh collections under its own prefix (dropped afterwards unless ``keep``),
the capture spool a temporary folder. Beside the Lite bench's figures it
measures:

- **submit to searchable**: per turn, the time from ``submit()`` returning to
  the record being readable from the server by another client;
- **growth**: for every figure, the exponent ``b`` of the least-squares fit
  ``y = a * size**b`` over the sizes run (0: flat, 1: linear);
- **tenancy**: one raw filtered search per query on the same vectors held
  two ways, a plain ``namespace`` field (what the store uses where the server
  cannot route upserts by partition key) and ``namespace`` as the partition
  key (rows inserted, which every server routes right), so the difference the
  mechanism makes is measured on the same server in the same run; and the
  same search at ``Strong`` consistency, which waits for the server's time
  tick (the store reads at ``Session``, see ``MilvusBackend``).

The server's disk is measured when its data folder is given.
"""

from __future__ import annotations

import math
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hindsight_lg.bench.scale import (
    ScaleConfig,
    ScaleRow,
    measure,
    percentiles,
    sentence,
)


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """The Lite bench's settings plus the server's URI and data folder."""

    uri: str
    scale: ScaleConfig
    server_dir: Path | None = None
    keep: bool = False
    visible: int = 20  # submit-to-searchable samples per size
    tenancy: bool = True  # the plain field against partition key comparison


@dataclass(slots=True)
class ServerRow:
    """One size on the server."""

    row: ScaleRow
    tenancy: str = "filter"
    visible_ms: tuple[float, float] = (0.0, 0.0)
    raw_filter: tuple[float, float] = (0.0, 0.0)
    raw_partitioned: tuple[float, float] = (0.0, 0.0)
    raw_strong: tuple[float, float] = (0.0, 0.0)
    server_disk_mb: float | None = None


@dataclass(slots=True)
class ServerRun:
    """Every size, and the growth exponent of each figure."""

    rows: list[ServerRow]
    growth: dict[str, float] = field(default_factory=dict)
    embedder: str = "hashing"


def exponent(points: Sequence[tuple[float, float]]) -> float:
    """``b`` of the least-squares fit ``y = a * x**b`` (nan under two points)."""
    usable = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y > 0]
    if len(usable) < 2:
        return math.nan
    mx = statistics.fmean(x for x, _ in usable)
    my = statistics.fmean(y for _, y in usable)
    num = sum((x - mx) * (y - my) for x, y in usable)
    den = sum((x - mx) ** 2 for x, _ in usable)
    return num / den if den else math.nan


def _prefix(size: int) -> str:
    return f"scale{size}_{os.getpid()}"


def _opener(uri: str, size: int) -> Callable[[Path], Any]:
    from hindsight_lg.backends.milvus import MilvusBackend

    return lambda _db: MilvusBackend.from_uri(uri, prefix=_prefix(size))


def _visible_ms(cfg: ServerConfig, size: int, n: int) -> tuple[float, float]:
    """Submit ``n`` turns one at a time; each is timed until another client reads it."""
    from hindsight_lg import HindsightMemory
    from hindsight_lg.backends import Where
    from hindsight_lg.backends.milvus import MilvusBackend

    reader = MilvusBackend.from_uri(cfg.uri, prefix=_prefix(size))
    memory = HindsightMemory.from_uri(
        cfg.uri, embedder=cfg.scale.embedder, prefix=_prefix(size)
    )
    samples = []
    try:
        rng = random.Random(3)
        for i in range(n):
            ns = f"visible{i % 10}"
            before = reader.count(ns, Where())
            start = time.perf_counter()
            memory.submit(sentence(rng, i), namespace=ns, speaker="user")
            while reader.count(ns, Where()) <= before:
                if time.perf_counter() - start > 30:
                    raise TimeoutError(f"turn {i} not searchable after 30 s")
                time.sleep(0.002)
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        memory.close()
        reader.close()
    return percentiles(samples)


def _tenancy_search(
    cfg: ServerConfig, size: int, namespaces: int
) -> tuple[tuple[float, float], tuple[float, float], tuple[float, float]]:
    """p50/p95 of a raw filtered search: plain field, partition key, Strong."""
    from hindsight_lg.bench._tenancy import compare_tenancy

    return compare_tenancy(
        cfg.uri,
        source=f"{_prefix(size)}_memories",
        namespaces=namespaces,
        queries=cfg.scale.queries,
    )


def drop_prefix(uri: str, prefix: str) -> None:
    """Drop every collection of the store under ``prefix`` on the server at ``uri``."""
    from pymilvus import MilvusClient

    client = MilvusClient(uri=uri)
    try:
        for name in client.list_collections():
            if name.startswith(prefix + "_"):
                client.drop_collection(name)
    finally:
        client.close()


def _drop(uri: str, size: int) -> None:
    drop_prefix(uri, _prefix(size))


def _disk_mb(folder: Path | None) -> float | None:
    if folder is None:
        return None
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 2**20


def _tenancy_of(uri: str, size: int) -> str:
    from hindsight_lg.backends.milvus import MilvusBackend

    backend = MilvusBackend.from_uri(uri, prefix=_prefix(size))
    try:
        return "partition key" if backend.partitioned() else "filter"
    finally:
        backend.close()


def measure_size(
    cfg: ServerConfig, size: int, folder: Path, say: Callable[[str], None]
) -> ServerRow:
    """One size on the server: the Lite bench's row, visibility and tenancy."""
    ns = cfg.scale.namespaces
    try:
        row = measure(size, cfg.scale, folder, say, open_raw=_opener(cfg.uri, size))
        out = ServerRow(row, tenancy=_tenancy_of(cfg.uri, size))
        say(f"{size} on the server: submit to searchable")
        out.visible_ms = _visible_ms(cfg, size, cfg.visible)
        if cfg.tenancy:
            say(f"{size} on the server: raw search, plain field vs partition key")
            tenancy = _tenancy_search(cfg, size, ns)
            out.raw_filter, out.raw_partitioned, out.raw_strong = tenancy
        out.server_disk_mb = _disk_mb(cfg.server_dir)
        return out
    finally:
        if not cfg.keep:
            _drop(cfg.uri, size)


FIGURES: dict[str, Callable[[ServerRow], float]] = {
    "recall p95 ms": lambda r: r.row.recall[1],
    "raw search p95 ms": lambda r: r.row.raw[1],
    "raw search p95 ms, partition key": lambda r: r.raw_partitioned[1],
    "raw search p95 ms, Strong": lambda r: r.raw_strong[1],
    "capture() turns/s": lambda r: r.row.capture_per_s,
    "batched turns/s": lambda r: r.row.batched_per_s,
    "submit() turns/s": lambda r: r.row.submit_per_s,
    "submit to searchable p95 ms": lambda r: r.visible_ms[1],
    "peak RSS MB": lambda r: r.row.peak_rss_mb,
}


def run_server_scale(
    cfg: ServerConfig, progress: Callable[[str], None] | None = None
) -> ServerRun:
    """Every size of ``cfg`` on the server, then the growth of each figure."""
    import sys

    def say(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    say_ = progress or say
    with tempfile.TemporaryDirectory(prefix="hindsight-scale-server-") as tmp:
        rows = [measure_size(cfg, s, Path(tmp), say_) for s in cfg.scale.sizes]
    growth = {
        name: exponent([(r.row.size, get(r)) for r in rows])
        for name, get in FIGURES.items()
    }
    return ServerRun(rows, growth, cfg.scale.embedder)
