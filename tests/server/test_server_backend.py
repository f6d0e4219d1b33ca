"""The backend contract and the acceptance examples on a real Milvus 2.3 server."""

from __future__ import annotations

from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.testing.backend_contract import BackendContract
from tests.memory.test_acceptance import *  # noqa: F403


class TestServerBackend(BackendContract):
    """The shipped contract on the server (``backend`` from ``conftest.py``)."""


# Lite- and in-memory-specific checks stay in their own modules.
del test_acceptance_examples_with_minilm_on_milvus_lite  # noqa: F821
del test_minilm_recall_finds_a_paraphrase  # noqa: F821


def test_server_has_no_bm25_so_lexical_search_falls_back(
    server_backend: MilvusBackend,
) -> None:
    """Milvus 2.3 lacks sparse vectors and BM25: the backend reports it."""
    assert (False, "milvus") == (
        server_backend.capabilities.bm25,
        server_backend.capabilities.name,
    )


def test_collections_read_with_strong_consistency(
    server_backend: MilvusBackend,
) -> None:
    """Every collection is created with Strong consistency (read your own writes)."""
    client = server_backend._client
    levels = {
        name: client.describe_collection(name).get("consistency_level")
        for name in client.list_collections()
        if name.startswith(server_backend.prefix + "_")
    }
    assert 4 == len(levels)
    assert {0} == set(levels.values())  # 0 is ConsistencyLevel.Strong
