"""Helper of the SIGKILL test: a zygote that forks capture loops on request.

It imports hindsight-lg once; each line ``DB SPOOL SEED OUT`` on stdin forks a
child (its own session, so its Milvus Lite server dies with it) that writes
``HELD <json counts>`` once the spool is replayed, then ``ACK <token>`` to OUT
after each capture returns. The child's pid is printed on stdout.
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sys
from collections import Counter

from hindsight_lg import HindsightMemory
from hindsight_lg.testing import HashingEmbedder

TOKEN = re.compile(r"tk[a-z]{12}")
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def capture_forever(db: str, spool: str, seed: int, out: str) -> None:
    """Report what the store holds, then capture unique events until killed."""
    rng = random.Random(seed)
    with open(out, "w", buffering=1, encoding="utf-8") as fh:
        memory = HindsightMemory.from_uri(db, embedder=HashingEmbedder(), spool=spool)
        rows = memory.list_memories("k", history=True, limit=100_000)
        held = Counter(t for r in rows for t in TOKEN.findall(r.content))
        fh.write("HELD " + json.dumps(held) + "\n")
        while True:
            words = " ".join("".join(rng.choices(LETTERS, k=7)) for _ in range(3))
            token = "tk" + "".join(rng.choices(LETTERS, k=12))
            memory.capture(f"Remember {words} {token}", namespace="k")
            fh.write("ACK " + token + "\n")


def main() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    for line in sys.stdin:
        db, spool, seed, out = line.split()
        pid = os.fork()
        if pid == 0:
            os.setsid()
            # Stdout is the zygote's pid channel to the test: the child's own
            # output (structlog prints to stdout by default) goes to stderr.
            os.dup2(2, 1)
            try:
                capture_forever(db, spool, int(seed), out)
            finally:
                os._exit(1)
        print(pid, flush=True)


if __name__ == "__main__":
    main()
