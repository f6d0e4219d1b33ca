"""Start-up, capture and recall speed of each packaged embedder, in one run.

For each embedder (today's packaged default ``minilm``, ``e5`` alone and the
``minilm+e5`` pair that is the default now), alternated ``--repeats`` times so each
sees the same machine load:

* *start*: a fresh Python process that imports hindsight_lg, builds the embedder and
  embeds one query (wall seconds, median), against a process that only imports
  hindsight_lg;
* *embed*: texts per second embedding the 320 texts of ``scripts/data/e5_centering.json``
  (160 English, 160 Chinese) in batches of 32, and the median ms of one query;
* *capture* and *recall*: ``HindsightMemory`` on the in-memory backend, the 320 texts
  captured one by one (turns per second, including ``flush()``), then 100 questions
  recalled (median and p95 ms).

    OMP_NUM_THREADS=1 python benchmarks/embedders.py [--repeats 3] [--embedders minilm,e5,minilm+e5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).parent.parent
TEXTS = ROOT / "scripts" / "data" / "e5_centering.json"
QUESTIONS = [
    "What does my sister do for work?",
    "我周末一般干什么？",
    "Which database do we use for caching?",
    "我什么时候去上海出差？",
    "Do I have any allergies?",
]
START = "import hindsight_lg"
EMBED_ONE = (
    "import sys; from hindsight_lg.embeddings import embedder_from_name, embed_queries;"
    "embed_queries(embedder_from_name(sys.argv[1]), ['where do I work?'])"
)


def _process(code: str, *args: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code, *args], check=True)
    return time.perf_counter() - started


def _embed_speed(embedder: Any, texts: list[str]) -> tuple[float, float]:
    from hindsight_lg.embeddings import embed_queries

    embedder.embed(texts[:2])  # load
    started = time.perf_counter()
    for i in range(0, len(texts), 32):
        embedder.embed(texts[i : i + 32])
    per_s = len(texts) / (time.perf_counter() - started)
    one = []
    for q in QUESTIONS * 10:
        t = time.perf_counter()
        embed_queries(embedder, [q])
        one.append((time.perf_counter() - t) * 1000)
    return per_s, statistics.median(one)


def _memory_speed(embedder: Any, texts: list[str]) -> tuple[float, float, float]:
    from hindsight_lg import HindsightMemory
    from hindsight_lg.backends.memory import InMemoryBackend

    memory = HindsightMemory(InMemoryBackend(), embedder)
    try:
        started = time.perf_counter()
        for i, text in enumerate(texts):
            memory.capture(text, namespace="u", thread_id=f"t{i // 20}", speaker="user")
        memory.flush()
        turns_s = len(texts) / (time.perf_counter() - started)
        took = []
        for q in QUESTIONS * 20:
            t = time.perf_counter()
            memory.recall(q, namespace="u", timeout=None)
            took.append((time.perf_counter() - t) * 1000)
    finally:
        memory.close()
    took.sort()
    return turns_s, statistics.median(took), took[int(0.95 * len(took)) - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--embedders", default="minilm,e5,minilm+e5")
    args = parser.parse_args()
    from hindsight_lg.embeddings import embedder_from_name

    data = json.loads(TEXTS.read_text(encoding="utf-8"))
    texts = [t for pair in zip(data["en"], data["zh"], strict=True) for t in pair]
    names = args.embedders.split(",")
    rows: dict[str, dict[str, list[float]]] = {n: {} for n in ["import only", *names]}
    for _ in range(args.repeats):
        rows["import only"].setdefault("start", []).append(_process(START))
        for name in names:
            row = rows[name]
            row.setdefault("start", []).append(_process(EMBED_ONE, name))
            embedder = embedder_from_name(name)
            per_s, one_ms = _embed_speed(embedder, texts)
            turns_s, p50, p95 = _memory_speed(embedder, texts)
            for key, value in zip(
                ("texts/s", "query ms", "turns/s", "recall p50", "recall p95"),
                (per_s, one_ms, turns_s, p50, p95),
                strict=True,
            ):
                row.setdefault(key, []).append(value)
            print(
                f"{name}: { ({k: round(v[-1], 2) for k, v in row.items()}) }",
                file=sys.stderr,
            )
    keys = ["start", "texts/s", "query ms", "turns/s", "recall p50", "recall p95"]
    print(
        "| embedder | start s | texts/s | one query ms | capture turns/s | recall p50 ms | recall p95 ms |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, row in rows.items():
        cells = [f"{statistics.median(row[k]):.2f}" if k in row else "-" for k in keys]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
