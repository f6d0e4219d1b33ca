"""A recall reads at most the policy's ``max_query_chars`` of a query, and says what it cut."""

from __future__ import annotations

import time

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.policy import Policy
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


def _memory(max_query_chars: int = 4000) -> HindsightMemory:
    return HindsightMemory(
        backend=InMemoryBackend(),
        embedder=HashingEmbedder(),
        policy=Policy(max_query_chars=max_query_chars),
    )


def test_a_long_query_is_cut_in_the_middle_and_the_cut_is_counted() -> None:
    """A query past the bound keeps its head and tail; ``cut_chars`` counts the rest."""
    memory = _memory(max_query_chars=100)
    memory.capture("I live in Lisbon", namespace="u", thread_id="t")
    query = "Where do I live? " + "x" * 1000 + " Tell me where I live."
    result = memory.recall(query, namespace="u", timeout=None)
    assert result.cut_chars == len(query) - 100
    assert result.query.startswith("Where do I live?")
    assert result.query.endswith("Tell me where I live.")


def test_a_short_query_is_read_whole() -> None:
    """A query within the bound is read as given, with nothing cut."""
    memory = _memory()
    result = memory.recall("Where do I live?", namespace="u", timeout=None)
    assert (result.query, result.cut_chars) == ("Where do I live?", 0)


def test_a_recall_of_a_hostile_query_keeps_its_deadline() -> None:
    """A 90,000-character query of hyphenated capitals returns near the 0.2 s deadline."""
    memory = _memory()
    memory.capture("I live in Lisbon", namespace="u", thread_id="t")
    memory.recall("warm up", namespace="u", timeout=None)
    start = time.perf_counter()
    result = memory.recall("Q-" * 45_000, namespace="u", timeout=0.2)
    took = time.perf_counter() - start
    assert result.cut_chars == 90_000 - 4000
    assert took < 1.0, took
