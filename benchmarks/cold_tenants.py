"""Recalls of tenants the read cache must load first, under recall's deadline.

On a Milvus server a replica's read cache cannot hold every tenant; a
recall of one it evicted loads it first, and a large tenant's load can take
longer than the deadline (0.2 s by default). This bench makes that happen on
purpose: ``--tenants`` tenants of ``--per`` memories each on the server at
``--uri``, a cache that holds one tenant, and each tenant recalled in turn
(so each recall finds its tenant evicted). Two passes of the same queries:

* **no deadline**: how long a cold recall takes (the load included), and
  what it returns: the reference;
* **the default deadline**: how many recalls time out, how many of those
  return memories (a recall past its deadline keeps what its dense search
  found, ``memory/recall/early.py``; before that, every one returned
  nothing) and how many of the reference's memories they keep.

Needs a running server (``python -m tests.server.conftest`` style, or the
``milvus`` package's ``MilvusServer``); the collections go under their own
prefix and are dropped afterwards.

OMP_NUM_THREADS=1 python benchmarks/cold_tenants.py --uri http://127.0.0.1:19530
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import read_cache_of
from hindsight_lg.bench.scale import bulk_load, percentiles, sentence
from hindsight_lg.bench.server_scale import drop_prefix
from hindsight_lg.testing import HashingEmbedder

PREFIX = "coldbench"
GAP_S = 1.5


def _queries(tenants: int, per: int) -> dict[str, str]:
    # The text of one memory of each tenant, as bulk_load wrote it, less its
    # serial number: a question the tenant's memories bear on.
    rng = random.Random(0)
    texts = [sentence(rng, i) for i in range(tenants * per)]
    return {f"ns{t}": texts[t + tenants * 7].split(" (note")[0] for t in range(tenants)}


def _pass(memory: Any, queries: dict[str, str], timeout: float | None) -> list[Any]:
    out = []
    for ns, query in queries.items():
        start = time.perf_counter()
        result = memory.recall(query, namespace=ns, timeout=timeout)
        out.append((ns, (time.perf_counter() - start) * 1000, result))
        # A recall past its deadline finishes (and loads its tenant) in the
        # background: let it, so each recall meets its own load only.
        time.sleep(GAP_S)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--uri", required=True)
    ap.add_argument("--tenants", type=int, default=12)
    ap.add_argument("--per", type=int, default=4000)
    ap.add_argument("--deadline", type=float, default=0.2)
    args = ap.parse_args()
    drop_prefix(args.uri, PREFIX)
    memory = HindsightMemory.from_uri(
        args.uri, embedder=HashingEmbedder(), prefix=PREFIX
    )
    try:
        bulk_load(memory, 0, args.tenants * args.per, args.tenants, random.Random(0))
        cache: Any = read_cache_of(memory.backend)
        if cache is None:
            raise SystemExit("no read cache in front of this store: nothing to evict")
        cache.invalidate()
        queries = _queries(args.tenants, args.per)
        # Room for one tenant and a half: each load evicts the tenant before.
        memory.recall(queries["ns0"], namespace="ns0", timeout=None)
        cache.bound(int(1.5 * cache.nbytes()))
        cache.invalidate()
        reference = _pass(memory, queries, None)
        timed = _pass(memory, queries, args.deadline)
    finally:
        memory.close()
        drop_prefix(args.uri, PREFIX)
    _report(reference, timed, args)


def _report(reference: list[Any], timed: list[Any], args: argparse.Namespace) -> None:
    cold = [ms for _, ms, _ in reference]
    p50, p95 = percentiles(cold)
    late = [r for _, _, r in timed if r.timed_out]
    kept = [r for r in late if r.memories]
    full = {ns: r.ids for ns, _, r in reference}
    overlap = [
        len(set(r.ids) & set(full[ns])) / len(r.ids)
        for ns, _, r in timed
        if r.timed_out and r.memories
    ]
    top = [
        len(set(full[ns][:3]) & set(r.ids)) / max(1, len(full[ns][:3]))
        for ns, _, r in timed
        if r.timed_out
    ]
    print(f"{args.tenants} tenants of {args.per} memories, cache holding one")
    print(f"cold recall, no deadline: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    print(f"with a {args.deadline} s deadline: {len(late)}/{len(timed)} timed out")
    print(f"  timed out with memories: {len(kept)}/{len(late)} (before: 0)")
    if overlap:
        print(
            f"  their memories also in the no-deadline recall: "
            f"{100 * statistics.mean(overlap):.0f}%"
        )
    if top:
        print(
            f"  the no-deadline recall's top 3 among them: "
            f"{100 * statistics.mean(top):.0f}%"
        )


if __name__ == "__main__":
    main()
