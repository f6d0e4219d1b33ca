"""The backend contract on every shipped backend, plus backend-specific checks."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from typing import Any

import pytest

from hindsight_lg import EmbeddingMismatch
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.model import EdgeType
from hindsight_lg.testing.backend_contract import EMBEDDER, BackendContract, edge, rec


class TestShippedBackends(BackendContract):
    """In-memory and Milvus Lite (the ``backend`` fixture of ``conftest.py``)."""

    @pytest.fixture
    def namespace(self, namespace: str) -> str:
        """The fresh namespace of ``conftest.py``."""
        return namespace


def test_in_memory_backend_rejects_another_model_once_it_holds_vectors() -> None:
    """Changing the embedding model over stored vectors names the re-embed command."""
    backend = InMemoryBackend()
    backend.setup(dim=384, model_id="a")
    backend.upsert("n", [rec("n", "x")])
    with pytest.raises(EmbeddingMismatch, match="hindsight-lg reembed"):
        backend.setup(dim=64, model_id="b")


@pytest.fixture
def lite(milvus_pool: Any) -> MilvusBackend:
    """The session's Milvus Lite backend for the hashing embedder."""
    backend: MilvusBackend = milvus_pool.get(
        "hashing", dim=EMBEDDER.dim, model_id=EMBEDDER.model_id
    )
    return backend


def test_milvus_rejects_another_model(lite: MilvusBackend) -> None:
    """Reopening a Milvus collection with another model names the re-embed command."""
    second = MilvusBackend(lite.uri, prefix="hashing")
    with pytest.raises(EmbeddingMismatch, match="hindsight-lg reembed") as info:
        second.setup(dim=64, model_id="hashing-64-3")
    assert "dim 384" in str(info.value) and "dim 64" in str(info.value)


def test_milvus_edges_of_a_frontier_take_one_query(
    lite: MilvusBackend, namespace: str
) -> None:
    """Neighbour expansion of a frontier is a single Milvus query, not one per id."""
    lite.add_edges(
        namespace,
        [edge(namespace, f"n{i}", f"n{i + 1}", EdgeType.PRECEDES) for i in range(20)],
    )
    lite.flush()
    calls: list[str] = []
    real = lite._client.query

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[0]))
        return real(*args, **kwargs)

    lite._client.query = spy
    try:
        got = lite.edges(namespace, [f"n{i}" for i in range(0, 20, 2)])
    finally:
        lite._client.query = real
    assert 19 == len(got)
    assert [lite._name("edges")] == calls


LOCK_SCRIPT = textwrap.dedent(
    """
    import sys
    from hindsight_lg.errors import StoreLocked
    from hindsight_lg.backends.milvus import MilvusBackend
    try:
        MilvusBackend.from_uri(sys.argv[1])
    except StoreLocked as exc:
        print("LOCKED", exc)
    else:
        print("OPENED")
    """
)


@pytest.mark.slow
def test_second_process_on_a_lite_file_gets_store_locked(lite: MilvusBackend) -> None:
    """Another process opening a held Milvus Lite file gets StoreLocked naming a server."""
    out = subprocess.run(
        [sys.executable, "-c", LOCK_SCRIPT, lite.uri],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert out.startswith("LOCKED"), out
    assert "Milvus server" in out and "milvus-lite server" in out
