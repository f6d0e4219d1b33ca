"""Increment one memory's counter N times by compare-and-swap (run as a process).

Usage: python -m tests.server._cas_worker URI PREFIX NAMESPACE MEMORY_ID N
Prints the number of conflicts it retried.
"""

from __future__ import annotations

import sys

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.errors import ConflictError
from hindsight_lg.testing import HashingEmbedder


def main(uri: str, prefix: str, namespace: str, memory_id: str, n: int) -> None:
    """Add one to ``meta["count"]`` ``n`` times, re-reading after each conflict."""
    backend = MilvusBackend(uri, prefix=prefix)
    conflicts = 0
    with HindsightMemory(backend, HashingEmbedder(), cache=False) as memory:
        done = 0
        while done < n:
            record = memory.get(namespace, memory_id)
            assert record is not None
            count = int(record.meta.get("count", 0)) + 1
            try:
                memory.update(
                    namespace,
                    memory_id,
                    expected_version=record.version,
                    meta={**record.meta, "count": count},
                )
            except ConflictError:
                conflicts += 1
                continue
            done += 1
    backend.close()
    print(conflicts)


if __name__ == "__main__":
    uri, prefix, namespace, memory_id, n = sys.argv[1:6]
    main(uri, prefix, namespace, memory_id, int(n))
