"""A simulated year per persona: what is kept, what faded, what changed (no LLM).

Each persona's year (``hindsight_lg.bench.year``) is played on a Milvus Lite
file in a temporary folder, reopened between seasons, with ``decay()`` every
week and no recall in between; then the year's direct questions are asked.

Run: ``python benchmarks/year_simulation.py [--embedder minilm|hashing]``
"""

from __future__ import annotations

import argparse
import time

from hindsight_lg.bench.year import PERSONAS, lite_folder, lite_opener, play, summary
from hindsight_lg.embeddings import default_embedder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", help="minilm or hashing")
    parser.add_argument("--verbose", "-v", action="store_true", help="per statement")
    args = parser.parse_args()
    embedder = default_embedder(args.embedder)
    outcomes = []
    start = time.perf_counter()
    for persona in PERSONAS:
        with lite_folder() as folder:
            outcomes.append(play(persona, lite_opener(folder, embedder)))
    print(f"embedder {embedder.model_id}, {time.perf_counter() - start:.1f} s")
    print(
        "| persona | kept (top 3) | faded | current first | stale active "
        "| stale cold | statuses |"
    )
    print("|---|---|---|---|---|---|---|")
    for row in summary(outcomes):
        print("| " + " | ".join(str(v) for v in row.values()) + " |")
    if args.verbose:
        for o in outcomes:
            print(o.persona, "kept", o.kept)
            print(o.persona, "faded", o.faded)
            print(o.persona, "current first", o.current_first, "stale", o.stale_active)
            print(o.persona, "stale cold", o.stale_cold)


if __name__ == "__main__":
    main()
