"""HindsightStore on Milvus Lite answers like LangGraph's InMemoryStore, op for op."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import HashingEmbedder
from hindsight_lg.testing.store_conformance import StoreConformance


@pytest.fixture(scope="module")
def engine(milvus_pool: Any) -> Iterator[HindsightMemory]:
    """One engine on the session's Milvus Lite file, for the whole module."""
    embedder = HashingEmbedder()
    backend = milvus_pool.get("storediff", dim=embedder.dim, model_id=embedder.model_id)
    memory = HindsightMemory(backend, embedder)
    yield memory
    memory.close()


class TestHindsightStoreOnMilvusLite(StoreConformance):
    """The shipped conformance suite on ``HindsightStore`` over Milvus Lite."""

    @pytest.fixture
    def store(self, engine: HindsightMemory) -> Iterator[HindsightStore]:
        """An empty store; every tenant is forgotten afterwards."""
        yield HindsightStore(engine, index={"fields": ["text"]})
        for tenant in engine.namespaces():
            engine.forget(tenant)
