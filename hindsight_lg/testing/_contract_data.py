"""Records, edges and helpers the backend contract's tests share.

Re-exported by :mod:`hindsight_lg.testing.backend_contract`, where a
third-party backend's own tests import them from.
"""

from __future__ import annotations

from typing import Any

from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.embeddings.hashing import HashingEmbedder
from hindsight_lg.model import Edge, EdgeType, MemoryRecord

EMBEDDER = HashingEmbedder()
T0 = 1_700_000_000.0


def rec(namespace: str, content: str, **fields: Any) -> MemoryRecord:
    """A record with a hashing embedding of its content."""
    dense = [float(x) for x in EMBEDDER.embed([content])[0]]
    return MemoryRecord(namespace=namespace, content=content, dense=dense, **fields)


def put(backend: MemoryBackend, namespace: str, *records: MemoryRecord) -> None:
    """Write ``records`` and make them searchable."""
    backend.upsert(namespace, list(records))
    backend.flush()


def contents(records: list[MemoryRecord]) -> list[str]:
    """The records' contents, in order."""
    return [r.content for r in records]


def names(varied: dict[str, MemoryRecord], records: list[MemoryRecord]) -> set[str]:
    """Which of the ``varied`` records (by their name there) ``records`` are."""
    by_id = {r.id: name for name, r in varied.items()}
    return {by_id[r.id] for r in records}


def edge(namespace: str, src: str, dst: str, t: EdgeType, w: float = 1.0) -> Edge:
    """An edge made at :data:`T0`."""
    return Edge(namespace, src, dst, t, w, T0)
