"""Capture on a Milvus server: turns/s and the store round trips behind them.

Bulk-loads ``--memories`` records over ``--namespaces`` tenants once (kept
under ``--prefix`` with ``--keep``, reused with ``--reuse``), then captures
``--turns`` fresh turns three ways, as ``bench scale`` does: ``capture()`` one
turn per call, ``capture()`` 20 turns per call (batched) and ``submit()``
(timed until ``flush()`` returns), tenants in turn. Every server call is
counted by the thread that made it (the caller, the worker, the committer and
its writers, the tenant prefetch, the write stamps), with its time, so a
before/after pair says which round trips went and which remain. It runs on
any commit of the package (it reads nothing new), so run it on the commit
before a change and after it, alternately, against the same loaded store:

    python -m benchmarks.server_capture --uri http://127.0.0.1:19530 --keep
    python -m benchmarks.server_capture --uri http://127.0.0.1:19530 --reuse --keep
"""

from __future__ import annotations

import argparse
import collections
import random
import tempfile
import threading
import time
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import with_read_cache
from hindsight_lg.backends.milvus import MilvusBackend, _core
from hindsight_lg.bench.scale import _batched, _capture, _submit, bulk_load, sentence
from hindsight_lg.bench.server_scale import drop_prefix
from hindsight_lg.embeddings import embedder_from_name

CALLS: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0])
_LOCK = threading.Lock()


def count_calls() -> None:
    """Count every server call by thread (name prefix) and kind."""
    real = _core.MilvusCore._call

    def call(self: Any, action: str, fn: Any, *args: Any, **kw: Any) -> Any:
        start = time.perf_counter()
        try:
            return real(self, action, fn, *args, **kw)
        finally:
            spent = time.perf_counter() - start
            name = getattr(fn, "__name__", "?")
            table = (
                args[0].rsplit("_", 1)[-1] if args and isinstance(args[0], str) else ""
            )
            thread = threading.current_thread().name.split("_")[0][:22]
            with _LOCK:
                c = CALLS[(thread, f"{name} {table}")]
                c[0] += 1
                c[1] += spent

    _core.MilvusCore._call = call  # type: ignore[method-assign]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--uri", required=True)
    p.add_argument("--memories", type=int, default=10_000)
    p.add_argument("--namespaces", type=int, default=1000)
    p.add_argument("--turns", type=int, default=200)
    p.add_argument("--modes", default="capture,batched,submit")
    p.add_argument("--embedder", default="hashing")
    p.add_argument("--prefix", default="servercap")
    p.add_argument("--keep", action="store_true", help="keep the loaded store")
    p.add_argument("--reuse", action="store_true", help="skip loading (kept before)")
    p.add_argument("--seed", type=int, default=None)
    a = p.parse_args()
    count_calls()
    raw = MilvusBackend.from_uri(a.uri, prefix=a.prefix)
    memory = HindsightMemory(
        with_read_cache(raw),
        embedder_from_name(a.embedder),
        cache=False,
        spool=tempfile.mkdtemp() + "/capture.spool",
    )
    rng = random.Random(a.seed if a.seed is not None else time.time_ns())
    try:
        if not a.reuse:
            start = time.perf_counter()
            bulk_load(memory, 0, a.memories, a.namespaces, rng)
            print(f"loaded {a.memories} in {time.perf_counter() - start:.0f} s")
        memory.capture(sentence(rng, 0), namespace="warm", speaker="user")
        memory.flush()
        for mode in a.modes.split(","):
            run(memory, mode, a.turns, a.namespaces, rng)
    finally:
        memory.close()
        if not a.keep:
            drop_prefix(a.uri, a.prefix)


def run(memory: Any, mode: str, n: int, namespaces: int, rng: random.Random) -> None:
    CALLS.clear()
    start = time.perf_counter()
    if mode == "batched":
        _batched(memory, n, namespaces, rng, 20)
    elif mode == "submit":
        _submit(memory, n, namespaces, rng)
    else:
        _capture(memory, n, namespaces, rng)
    wall = time.perf_counter() - start
    print(f"{mode}: {n / wall:.1f} turns/s ({n} turns)")
    for (thread, kind), (calls, spent) in sorted(
        CALLS.items(), key=lambda kv: -kv[1][1]
    ):
        print(
            f"  {thread:22s} {kind:18s} {calls / n:6.2f} calls/turn "
            f"{1000 * spent / n:8.2f} ms/turn ({1000 * spent / max(calls, 1):.1f} ms/call)"
        )
    memory.flush()


if __name__ == "__main__":
    main()
