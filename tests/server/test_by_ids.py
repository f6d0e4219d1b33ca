"""On a server, a recall's dense search sends ids and the read cache the records.

The rules with a counted in-memory store are in
``tests/backends/test_cached_by_ids.py``; here the real server answers, and
a second store on the same collections, with the ids-only search taken away,
recalls the same way.
"""

from __future__ import annotations

import functools
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.testing import FrozenClock, HashingEmbedder

EMBEDDER = HashingEmbedder()
NOTES = [
    "I keep bees in the garden behind the house",
    "My sister Mei is a pediatric nurse in Lisbon",
    "We painted the garden gate blue in May",
    "I switched from coffee to green tea last winter",
    "The bees swarmed twice this summer",
]


@pytest.fixture
def prefix(milvus_server_uri: str) -> Iterator[str]:
    name = f"byids{uuid.uuid4().hex[:8]}"
    yield name
    cleanup = MilvusBackend.from_uri(milvus_server_uri, prefix=name)
    for collection in cleanup._client.list_collections():
        if collection.startswith(name + "_"):
            cleanup._client.drop_collection(collection)
    cleanup.close()


def _searches(backend: MilvusBackend) -> list[dict[str, Any]]:
    """The keyword arguments of every dense search the client sends."""
    calls: list[dict[str, Any]] = []
    real: Callable[..., Any] = backend._client.search

    @functools.wraps(real)
    def spy(*args: Any, **kwargs: Any) -> Any:
        if kwargs.get("anns_field") == "dense":
            calls.append(kwargs)
        return real(*args, **kwargs)

    backend._client.search = spy  # type: ignore[method-assign]
    return calls


class _WithoutIds(MilvusBackend):
    """The server backend with its ids-only search taken away (``DenseIds``)."""

    search_dense_ids = None  # type: ignore[assignment]


def _memory(
    uri: str, prefix: str, *, by_ids: bool = True
) -> tuple[HindsightMemory, MilvusBackend]:
    kind = MilvusBackend if by_ids else _WithoutIds
    store = kind.from_uri(uri, prefix=prefix)
    return HindsightMemory(store, EMBEDDER, clock=FrozenClock()), store


def test_a_recall_gets_ids_from_the_server_and_recalls_as_before(
    milvus_server_uri: str, prefix: str
) -> None:
    """The dense search asks for ids only; the result is the full search's."""
    memory, store = _memory(milvus_server_uri, prefix)
    with memory:
        for note in NOTES:
            memory.remember(note, namespace="u1")
        memory.recall("bees", namespace="u1", timeout=None)  # the tenant is cached
        searches = _searches(store)
        got = memory.recall("what about the bees?", namespace="u1", timeout=None)
    other, _ = _memory(milvus_server_uri, prefix, by_ids=False)
    with other:
        want = other.recall("what about the bees?", namespace="u1", timeout=None)
    assert searches and all(s["output_fields"] == ["id"] for s in searches)
    assert got.memories and want.ids == got.ids
    assert want.to_prompt() == got.to_prompt()


def test_a_replica_recalls_another_s_correction_in_its_new_words(
    milvus_server_uri: str, prefix: str
) -> None:
    """Cached on one replica: another's correction shows, its forgotten memory not."""
    (one, _), (two, _) = (
        _memory(milvus_server_uri, prefix),
        _memory(milvus_server_uri, prefix),
    )
    with one, two:
        ids = [one.remember(note, namespace="u1").id for note in NOTES]
        before = one.recall("bees", namespace="u1", timeout=None).to_prompt()
        two.correct("u1", ids[0], "I keep three hives of bees in the garden")
        two.forget("u1", [ids[4]])
        after = one.recall("bees", namespace="u1", timeout=None).to_prompt()
    assert "behind the house" in before and "swarmed" in before
    assert "three hives of bees" in after
    assert "behind the house" not in after and "swarmed" not in after
