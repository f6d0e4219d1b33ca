"""Re-embedding on a Milvus server: the switch, and cleanup after a failure."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus.generations import copy_generation
from hindsight_lg.memory.jobs.reembed import reembed
from hindsight_lg.testing import HashingEmbedder

TURNS = ["I prefer green tea over coffee", "My sister Anna lives in Lisbon"]


def filled(uri: str) -> str:
    """A fresh prefix on the server with two namespaces of memories (hashing-64)."""
    prefix = f"re_{uuid.uuid4().hex[:8]}"
    backend = MilvusBackend(uri, prefix=prefix)
    with HindsightMemory(backend, HashingEmbedder(64), owns_backend=True) as memory:
        for ns in ("u1", "u2"):
            for turn in TURNS:
                memory.capture(turn, namespace=ns)
    return prefix


def names(uri: str, prefix: str) -> set[str]:
    backend = MilvusBackend(uri, prefix=prefix)
    try:
        return {n for n in backend._client.list_collections() if n.startswith(prefix)}
    finally:
        backend.close()


def test_reembed_switches_a_server_store(milvus_server_uri: str) -> None:
    """After reembed the server store opens with the new model and lists the same memories."""
    prefix = filled(milvus_server_uri)
    report = reembed(milvus_server_uri, to=HashingEmbedder(128), prefix=prefix)
    backend = MilvusBackend(milvus_server_uri, prefix=prefix)
    with HindsightMemory(backend, HashingEmbedder(128), owns_backend=True) as memory:
        listed = {ns: len(memory.list_memories(ns)) for ns in ("u1", "u2")}
    assert (["u1", "u2"], f"{prefix}_r2") == (report.namespaces, report.new_prefix)
    assert {"u1": 2, "u2": 2} == listed


def test_a_failed_reembed_leaves_no_collections_on_the_server(
    milvus_server_uri: str,
) -> None:
    """An error mid-copy drops the new generation's collections from the server."""
    prefix = filled(milvus_server_uri)
    before = names(milvus_server_uri, prefix)

    def failing(batch: Any) -> None:
        raise RuntimeError("embedding server went away")

    with pytest.raises(RuntimeError, match="went away"):
        copy_generation(
            milvus_server_uri, dim=128, model_id="m", revector=failing, prefix=prefix
        )
    assert before == names(milvus_server_uri, prefix)
