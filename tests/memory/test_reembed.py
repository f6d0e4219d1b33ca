"""Re-embedding a Milvus Lite store with another model, switched atomically."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_lg import EmbeddingMismatch, HindsightMemory
from hindsight_lg.memory.reembed import next_prefix, reembed
from hindsight_lg.store.milvus import MilvusBackend
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
