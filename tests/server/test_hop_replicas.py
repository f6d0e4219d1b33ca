"""Recall's second hop on a Milvus server is the same on every replica.

A replica that captured a tenant holds its vectors in its read cache; one
that only recalls it holds none. The hop's lenders bring their vectors with
the first dense search, so both hop from the same point. On a server the hop
is one more round trip, so it runs only with ``Policy(hop_over_network=True)``;
by default no replica takes it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg.backends import read_cache_of
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.testing import HashingEmbedder

TURNS = [
    "Jon lost his banker job and opened a dance studio downtown",
    "The dance studio downtown hosts a salsa night every Friday",
    "Gina sells hoodies in her online clothing store",
]
QUESTION = "What did Jon do after the banker job?"


@pytest.fixture
def reader_store(milvus_server_uri: str) -> Iterator[MilvusBackend]:
    """A second process's view of the session's store: its own client and cache."""
    embedder = HashingEmbedder()
    backend = MilvusBackend(milvus_server_uri, prefix="hashing")
    backend.setup(dim=embedder.dim, model_id=embedder.model_id)
    yield backend
    backend.close()


def _hops(memory: HindsightMemory, namespace: str) -> dict[str, float]:
    result = memory.recall(
        QUESTION, namespace=namespace, budget_tokens=2000, explain=True, timeout=None
    )
    assert result.explanation is not None
    return {
        memory_id: round(paths["hop"], 4)
        for memory_id, paths in result.explanation.items()
        if "hop" in paths
    }


def _keeps_vectors(store: MilvusBackend, namespace: str) -> bool:
    cache = read_cache_of(store)
    assert cache is not None
    space = cache._spaces.get(namespace)
    return space is not None and space.keep_vectors


def test_a_replica_that_only_recalls_hops_as_the_one_that_captured(
    server_backend: MilvusBackend, reader_store: MilvusBackend, namespace: str
) -> None:
    """The same query gives the same hop candidates on both replicas."""
    embedder = HashingEmbedder()
    hop = Policy(hop_over_network=True)
    writer = HindsightMemory(server_backend, embedder, policy=hop)
    reader = HindsightMemory(reader_store, embedder, policy=hop)
    try:
        ids = [r.id for t in TURNS for r in writer.capture(t, namespace=namespace)]
        assert len(ids) >= 3
        hops = {"writer": _hops(writer, namespace), "reader": _hops(reader, namespace)}
        kept = {
            name: _keeps_vectors(store, namespace)
            for name, store in (("writer", server_backend), ("reader", reader_store))
        }
    finally:
        writer.close()
        reader.close()
    # The two states a server's replicas are in: vectors cached, or none.
    assert {"writer": True, "reader": False} == kept
    assert hops["writer"]
    assert hops["writer"] == hops["reader"]


def test_by_default_no_replica_takes_the_hop_on_a_server(
    server_backend: MilvusBackend, reader_store: MilvusBackend, namespace: str
) -> None:
    """Without hop_over_network neither replica makes the hop's second search."""
    embedder = HashingEmbedder()
    writer = HindsightMemory(server_backend, embedder)
    reader = HindsightMemory(reader_store, embedder)
    try:
        for t in TURNS:
            writer.capture(t, namespace=namespace)
        assert server_backend.capabilities.remote
        assert {} == _hops(writer, namespace) == _hops(reader, namespace)
    finally:
        writer.close()
        reader.close()
