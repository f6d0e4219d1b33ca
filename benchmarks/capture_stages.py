"""bench scale's three capture modes alone: turns/s, the model alone, the stages.

The capture part of ``hindsight-lg bench scale`` without its bulk load and
recalls, so a before/after pair takes a minute or two instead of several:
``capture()`` one turn per call, 20 turns per call (batched) and ``submit()``
over ``--namespaces`` new tenants, each after the model alone on the same turns
(one text per call; per 20 for batched), with the stage table of
:mod:`hindsight_lg.bench._stages` (ms per turn) and what limits each mode. On a
fresh Milvus Lite file, or under a fresh prefix on the server at ``--uri``
(dropped afterwards). It reads nothing new, so it runs on any commit of the
package: run it from each checkout in turn, alternately, on the same machine:

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python -m benchmarks.capture_stages --embedder minilm
    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python -m benchmarks.capture_stages \\
        --embedder minilm --uri http://127.0.0.1:19530
"""

from __future__ import annotations

import argparse
import tempfile
import uuid
from pathlib import Path

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import with_read_cache
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.bench._stages import STAGES, ClockedEmbedder, StageClock
from hindsight_lg.bench.scale import ScaleConfig, ScaleRow, TimedBackend, _captures
from hindsight_lg.bench.server_scale import drop_prefix
from hindsight_lg.embeddings import embedder_from_name


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--uri", default="", help="a Milvus server (default: Lite)")
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--captures", type=int, default=600, help="turns, all modes")
    p.add_argument("--namespaces", type=int, default=1000)
    args = p.parse_args()
    cfg = ScaleConfig(
        embedder=args.embedder, captures=args.captures, namespaces=args.namespaces
    )
    prefix = "capstages" + uuid.uuid4().hex[:6]
    with tempfile.TemporaryDirectory(prefix="hindsight-capstages-") as tmp:
        folder = Path(tmp)
        raw = (
            MilvusBackend.from_uri(args.uri, prefix=prefix)
            if args.uri
            else MilvusBackend(str(folder / "memory.db"))
        )
        clock = StageClock()
        memory = HindsightMemory(
            TimedBackend(with_read_cache(raw), clock),
            ClockedEmbedder(embedder_from_name(args.embedder), clock),
            cache=False,
            spool=str(folder / "memory.db.spool"),
        )
        row = ScaleRow(args.captures, namespaces=args.namespaces)
        try:
            _captures(memory, clock, cfg, row, seed=args.captures)
        finally:
            memory.close()
            if args.uri:
                drop_prefix(args.uri, prefix)
    rates = {
        "capture": row.capture_per_s,
        "batched": row.batched_per_s,
        "submit": row.submit_per_s,
    }
    print(f"model alone, one text per call: {row.model_per_s:.1f}/s")
    print(
        "| mode | turns/s | model alone | ratio | " + " | ".join(STAGES) + " | limit |"
    )
    for mode, rate in rates.items():
        stages = row.stages[mode]
        alone = row.model_alone[mode]
        cells = " | ".join(f"{stages.ms[k]:.1f}" for k in STAGES)
        print(
            f"| {mode} | {rate:.1f} | {alone:.1f} | {rate / alone:.2f} | {cells} "
            f"| {stages.limit} |"
        )


if __name__ == "__main__":
    main()
