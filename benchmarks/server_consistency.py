"""Recall on a Milvus server: reads at Session against reads at Strong, one run.

Bulk-loads ``--memories`` records over ``--namespaces`` tenants on a running
server, then times recalls of tenants not yet in the read cache ("cold": the
tenant is loaded) and of cached ones ("warm"), for a store reading at each
consistency level, beside one raw filtered dense search at each level. A
Strong read waits for the server's time tick (``proxy.timeTickInterval``:
50 ms on the test suite's server, 200 ms by default), so the Strong rows show
what every read paid before Session became the default.

    python -m benchmarks.server_consistency --uri http://127.0.0.1:19530
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
import uuid

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import Where, with_read_cache
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.bench.scale import bulk_load, percentiles
from hindsight_lg.bench.server_scale import drop_prefix
from hindsight_lg.embeddings import embedder_from_name

QUESTION = "what did Anna say about tea?"


def _ms(fn: object) -> float:
    start = time.perf_counter()
    fn()  # type: ignore[operator]
    return (time.perf_counter() - start) * 1000


def _row(uri: str, prefix: str, level: str, namespaces: int, n: int) -> str:
    raw = MilvusBackend.from_uri(uri, prefix=prefix, read_consistency=level)
    embedder = embedder_from_name("hashing")
    with tempfile.TemporaryDirectory() as tmp:
        memory = HindsightMemory(
            with_read_cache(raw), embedder, cache=False, spool=f"{tmp}/s"
        )
        try:
            picks = random.Random(level).sample(range(namespaces), n)
            cold = [
                _ms(
                    lambda i=i: memory.recall(
                        QUESTION, namespace=f"ns{i}", timeout=None
                    )
                )
                for i in picks
            ]
            warm = [
                _ms(
                    lambda i=i: memory.recall(
                        QUESTION, namespace=f"ns{i}", timeout=None
                    )
                )
                for i in picks
            ]
            vector = list(map(float, embedder.embed([QUESTION])[0]))
            search = [
                _ms(lambda i=i: raw.search_dense(f"ns{i}", vector, Where(), limit=20))
                for i in picks
            ]
        finally:
            memory.close()
    c, w, s = percentiles(cold), percentiles(warm), percentiles(search)
    return (
        f"| {level} | {c[0]:.1f} / {c[1]:.1f} | {w[0]:.1f} / {w[1]:.1f} "
        f"| {s[0]:.1f} / {s[1]:.1f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default="http://127.0.0.1:19530")
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--namespaces", type=int, default=1000)
    parser.add_argument("--recalls", type=int, default=40, help="per level")
    args = parser.parse_args()
    prefix = f"consistency{uuid.uuid4().hex[:8]}"
    loader = HindsightMemory(
        MilvusBackend.from_uri(args.uri, prefix=prefix),
        embedder_from_name("hashing"),
        cache=False,
        spool=None,
    )
    try:
        bulk_load(loader, 0, args.memories, args.namespaces, random.Random(1))
        print(
            f"{args.memories:,} memories over {args.namespaces:,} namespaces, "
            f"{args.recalls} tenants per level; ms, p50 / p95\n"
        )
        print("| reads | recall, tenant not cached | recall, cached | raw search |")
        print("|---|---|---|---|")
        for level in ("Strong", "Session"):
            print(_row(args.uri, prefix, level, args.namespaces, args.recalls))
    finally:
        loader.close()
        drop_prefix(args.uri, prefix)


if __name__ == "__main__":
    main()
