"""What the damage checks cost when a Milvus Lite store opens and closes.

A store of N memories (hashing vectors, one namespace, one edge and one audit
entry per memory) is written once; then it is opened (``setup()``) and closed
R times in fresh in-process Lite servers, as a process start would. Reported:
the median open and close, and the part of each spent in the checks (the
manifest scan before connecting, the ``count(*)`` per collection and the
ledger write), timed separately on the same open store.

    OMP_NUM_THREADS=1 python benchmarks/lite_integrity.py --memories 10000
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from milvus_lite.server_manager import server_manager_instance

from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus._integrity import check_manifests
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord
from hindsight_lg.testing import HashingEmbedder

EMBEDDER = HashingEmbedder()


def _open(uri: str) -> MilvusBackend:
    backend = MilvusBackend(uri)
    backend.setup(dim=EMBEDDER.dim, model_id=EMBEDDER.model_id)
    return backend


def _close(backend: MilvusBackend) -> None:
    backend.close()
    server_manager_instance.release_server(backend.uri)


def _fill(uri: str, n: int) -> None:
    backend = _open(uri)
    for start in range(0, n, 1000):
        texts = [
            f"note {i} about the garden" for i in range(start, min(n, start + 1000))
        ]
        vectors = EMBEDDER.embed(texts)
        records = [
            MemoryRecord(namespace="n", content=t, dense=[float(x) for x in v])
            for t, v in zip(texts, vectors, strict=True)
        ]
        backend.upsert("n", records)
        backend.add_edges(
            "n", [Edge("n", r.id, "entity:garden", EdgeType.MENTIONS) for r in records]
        )
        backend.append_audit("n", [AuditEntry("n", r.id, "create") for r in records])
        backend.flush()
    _close(backend)


def main() -> None:
    """Print median open, close and check times for a store of N memories."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--memories", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    uri = str(Path(tempfile.mkdtemp()) / "integrity.db")
    _fill(uri, args.memories)
    opens, closes, scans, counts, ledgers = [], [], [], [], []
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        check_manifests(uri)
        scans.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        backend = _open(uri)
        opens.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        rows = backend._row_counts()
        counts.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        assert backend._rows is not None
        backend._rows.record(rows)
        ledgers.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        _close(backend)
        closes.append(time.perf_counter() - t0)
    ms = {
        "open (setup)": opens,
        "close": closes,
        "manifest scan": scans,
        "count(*) x4": counts,
        "ledger write": ledgers,
    }
    print(f"{args.memories} memories, {rows}, median of {args.rounds}:")
    for name, values in ms.items():
        print(f"  {name:14s} {1000 * statistics.median(values):8.1f} ms")


if __name__ == "__main__":
    main()
