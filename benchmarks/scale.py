"""Same as ``hindsight-lg bench scale``; see docs/benchmarks.md for options and figures.

OMP_NUM_THREADS=1 python benchmarks/scale.py --help
"""

from __future__ import annotations

import sys

from hindsight_lg.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", "scale", *sys.argv[1:]]))
