"""Re-embedding a Milvus Lite store with another model, switched atomically."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hindsight_lg import EmbeddingMismatch, HindsightMemory
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus.generations import next_prefix
from hindsight_lg.memory.transfer.reembed import reembed
from hindsight_lg.testing import HashingEmbedder

TURNS = [
    "I prefer green tea over coffee",
    "My sister Anna lives in Lisbon",
    "Remind me to renew the passport next month",
]


def test_next_prefix_counts_revisions() -> None:
    """Each re-embed gets a fresh prefix after the active one."""
    assert ["h_r2", "h_r3"] == [next_prefix("h", "h"), next_prefix("h", "h_r2")]


def test_reembed_switches_the_store_to_the_new_model(tmp_path: Path) -> None:
    """After reembed the new embedder opens the store and recalls the same memories."""
    uri = str(tmp_path / "store.db")
    old, new = HashingEmbedder(64), HashingEmbedder(128)
    with HindsightMemory(MilvusBackend(uri), old, owns_backend=True) as memory:
        for turn in TURNS:
            memory.capture(turn, namespace="u1")
        before = set(
            memory.recall("tea Anna passport", namespace="u1", timeout=None).ids
        )
        stored = {r.content for r in memory.list_memories("u1")}
    report = reembed(uri, to=new)
    with HindsightMemory(MilvusBackend(uri), new, owns_backend=True) as memory:
        after = set(
            memory.recall("tea Anna passport", namespace="u1", timeout=None).ids
        )
        listed = {r.content for r in memory.list_memories("u1")}
    assert ("hindsight", "hindsight_r2", ["u1"]) == (
        report.old_prefix,
        report.new_prefix,
        report.namespaces,
    )
    assert before and before == after
    assert stored == listed
    with pytest.raises(EmbeddingMismatch, match="hindsight-lg reembed"):
        HindsightMemory(MilvusBackend(uri), old, owns_backend=True)


def test_reembed_keeps_turn_context_in_split_events(tmp_path: Path) -> None:
    """A split event's new vector is blended with its turn, as at capture."""
    uri = str(tmp_path / "store.db")
    new = HashingEmbedder(128)
    with HindsightMemory(
        MilvusBackend(uri), HashingEmbedder(64), owns_backend=True
    ) as m:
        m.capture("We went to the museum. The kids loved the bones.", namespace="u")
        m.capture("I prefer green tea over coffee", namespace="u")
    reembed(uri, to=new)
    backend = MilvusBackend(uri)
    backend.setup(dim=new.dim, model_id=new.model_id)
    try:
        rows = backend.query("u", Where(), limit=10, vectors=True)
    finally:
        backend.close()
    for r in rows:
        plain = np.asarray(new.embed([r.content])[0])
        cosine = float(np.dot(plain, r.dense) / np.linalg.norm(plain))
        split = "context" in r.meta
        assert (split, cosine > 0.999) in {(True, False), (False, True)}, r.content
    assert sum("context" in r.meta for r in rows) == 2
