"""Fixtures for the observability tests: a small memory with a frozen clock."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    """An in-memory engine with a hashing embedder and a frozen clock."""
    engine = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(dim=64), clock=FrozenClock()
    )
    yield engine
    engine.close()
