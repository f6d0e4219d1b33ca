"""Which consistency a server's reads use, and what one cache load costs.

A ``Strong`` read waits for the server's next time tick; the store reads at
``Session`` except where another process's writes must show (under a lease,
and the read-back that confirms a deletion).
"""

from __future__ import annotations

import functools
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hindsight_lg.backends import CachedBackend, Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import HashingEmbedder

EMBEDDER = HashingEmbedder()


@pytest.fixture
def store(milvus_server_uri: str) -> Iterator[MilvusBackend]:
    backend = MilvusBackend.from_uri(
        milvus_server_uri, prefix=f"consistency{uuid.uuid4().hex[:8]}"
    )
    backend.setup(dim=EMBEDDER.dim, model_id=EMBEDDER.model_id)
    yield backend
    client = backend._client
    for name in client.list_collections():
        if name.startswith(backend.prefix + "_"):
            client.drop_collection(name)
    backend.close()


def _spy(backend: MilvusBackend, name: str) -> list[dict[str, Any]]:
    """Record the keyword arguments of every ``name`` call of the client."""
    calls: list[dict[str, Any]] = []
    real: Callable[..., Any] = getattr(backend._client, name)

    @functools.wraps(real)
    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append({"collection": args[0] if args else None, **kwargs})
        return real(*args, **kwargs)

    setattr(backend._client, name, spy)
    return calls


def _records(n: int, namespace: str) -> list[MemoryRecord]:
    texts = [f"note {i} about tea and hiking" for i in range(n)]
    return [
        MemoryRecord(namespace=namespace, content=t, dense=list(map(float, v)))
        for t, v in zip(texts, EMBEDDER.embed(texts), strict=True)
    ]


def test_reads_are_session_and_strong_under_a_lease(store: MilvusBackend) -> None:
    store.upsert("u1", _records(3, "u1"))
    queries = _spy(store, "query")
    searches = _spy(store, "search")

    assert len(store.query("u1", Where())) == 3  # own writes show at Session
    store.search_dense("u1", EMBEDDER.embed(["tea"])[0], Where(), limit=5)
    with store.exclusive("u1", "memory:x"):
        store.query("u1", Where())

    data = [c for c in queries if c["collection"] == store.memories]
    assert [c["consistency_level"] for c in data] == ["Session", "Strong"]
    assert searches[0]["consistency_level"] == "Session"
    # Lease tickets live in <prefix>_meta and keep its Strong default.
    assert all(
        "consistency_level" not in c
        for c in queries
        if c["collection"] != store.memories
    )


def test_a_deletion_is_confirmed_by_a_strong_read(store: MilvusBackend) -> None:
    [record] = _records(1, "u1")
    store.upsert("u1", [record])
    queries = _spy(store, "query")

    assert store.delete("u1", [record.id]) == 1

    # Milvus 2.3 gives a delete no timestamp for Session reads to wait on.
    assert queries[-1]["collection"] == store.memories
    assert queries[-1]["consistency_level"] == "Strong"
    other = MilvusBackend.from_uri(store.uri, prefix=store.prefix)
    try:
        assert other.get("u1", [record.id]) == []
    finally:
        other.close()


def test_a_memory_not_found_at_session_is_asked_for_again_strong(
    store: MilvusBackend,
) -> None:
    [record] = _records(1, "u1")
    store.upsert("u1", [record])
    gets = _spy(store, "get")

    assert [r.id for r in store.get("u1", [record.id, "absent"])] == [record.id]

    levels = [(len(c["ids"]), c["consistency_level"]) for c in gets]
    assert levels == [(2, "Session"), (1, "Strong")]  # only the missing one


def test_an_unknown_consistency_level_is_refused(milvus_server_uri: str) -> None:
    with pytest.raises(ValueError, match="read_consistency must be one of"):
        MilvusBackend(milvus_server_uri, read_consistency="Fast")


def test_loading_a_tenant_into_the_cache_takes_one_query_per_collection(
    store: MilvusBackend,
) -> None:
    store.upsert("u1", _records(40, "u1"))
    queries = _spy(store, "query")
    iterators = _spy(store, "query_iterator")
    cache = CachedBackend(store, ttl_s=10.0)

    hits = cache.search_lexical("u1", ["tea"], Where(), limit=50)

    assert len(hits) == 40
    assert iterators == []  # an iterator costs a round trip per batch
    # The other writers' stamps (a few rows of <prefix>_meta), then the data.
    assert sorted(c["collection"] for c in queries) == sorted(
        [store.memories, store._name("edges"), store._name("meta")]
    )
    [stamps] = [c for c in queries if c["collection"] == store._name("meta")]
    assert stamps["filter"].startswith('namespace == "stamp:')
    assert stamps["consistency_level"] == "Session"


# -- write stamps: how a cache learns that another process wrote ------------


@pytest.fixture
def other(store: MilvusBackend) -> Iterator[MilvusBackend]:
    """A second writer on the same store (another replica, as far as stamps go)."""
    backend = MilvusBackend.from_uri(store.uri, prefix=store.prefix)
    backend.setup(dim=EMBEDDER.dim, model_id=EMBEDDER.model_id)
    yield backend
    backend.close()


def _lexical_ids(cache: CachedBackend, namespace: str) -> set[str]:
    return {
        h.record.id for h in cache.search_lexical(namespace, ["tea"], Where(), limit=99)
    }


def test_a_cached_tenant_nobody_else_wrote_costs_one_small_read_per_recall(
    store: MilvusBackend,
) -> None:
    cache = CachedBackend(store, ttl_s=10.0)
    kept = _records(5, "u1")
    cache.upsert("u1", kept)  # this process's own writes: no reload for them
    assert len(_lexical_ids(cache, "u1")) == 5
    cache.upsert("u1", _records(1, "u1"))
    queries = _spy(store, "query")
    gets = _spy(store, "get")

    cache.refresh("u1")
    found = _lexical_ids(cache, "u1")
    assert cache.live("u1", sorted(found)) == sorted(found)

    assert len(found) == 6
    assert [c["collection"] for c in queries] == [store._name("meta")]
    assert gets == []  # the live check is answered by the stamps read


def test_another_writers_memory_reaches_the_cache_after_its_stamp(
    store: MilvusBackend, other: MilvusBackend
) -> None:
    cache = CachedBackend(store, ttl_s=10.0, max_age_s=600.0)
    cache.upsert("u1", _records(2, "u1"))
    assert len(_lexical_ids(cache, "u1")) == 2
    [new] = _records(1, "u1")

    other.upsert("u1", [new])
    # Its stamp is written by a background thread in milliseconds; the server
    # shows it to this process within about one time tick.
    deadline = time.monotonic() + 5.0
    while new.id not in _lexical_ids(cache, "u1"):
        assert time.monotonic() < deadline, "another writer's memory never showed"
        time.sleep(0.05)
        cache.refresh("u1")


def test_a_memory_another_writer_forgot_is_gone_from_the_next_recall(
    store: MilvusBackend, other: MilvusBackend
) -> None:
    cache = CachedBackend(store, ttl_s=10.0, max_age_s=600.0)
    doomed, kept = _records(2, "u1")
    cache.upsert("u1", [doomed, kept])
    assert _lexical_ids(cache, "u1") == {doomed.id, kept.id}

    assert other.delete("u1", [doomed.id]) == 1  # returns once its stamp is stored

    cache.refresh("u1")  # no waiting: the next recall's check sees it at once
    assert _lexical_ids(cache, "u1") == {kept.id}
    assert cache.live("u1", [doomed.id, kept.id]) == [kept.id]


def test_a_cache_without_a_recall_asks_again_after_check_s(
    store: MilvusBackend, other: MilvusBackend
) -> None:
    cache = CachedBackend(store, ttl_s=10.0, check_s=0.2, max_age_s=600.0)
    doomed, kept = _records(2, "u1")
    cache.upsert("u1", [doomed, kept])
    assert len(_lexical_ids(cache, "u1")) == 2
    other.delete("u1", [doomed.id])

    time.sleep(0.3)
    assert _lexical_ids(cache, "u1") == {kept.id}


def test_stamp_rows_of_writers_long_gone_are_pruned(
    store: MilvusBackend, other: MilvusBackend
) -> None:
    from hindsight_lg.backends.milvus._stamps import PRUNE_S

    cache = CachedBackend(store, ttl_s=10.0, max_age_s=600.0)
    other.upsert("u1", _records(1, "u1"))
    other._stamper().flush()
    assert len(_lexical_ids(cache, "u1")) == 1  # loaded with other's stamp
    assert list(store.write_stamps("u1") or {}) == [other._stamper().writer]

    other._stamper().prune()  # written a moment ago: kept
    assert list(store.write_stamps("u1") or {}) == [other._stamper().writer]

    other._stamper().prune(now=time.time() + PRUNE_S + 60)  # a week on
    deadline = time.monotonic() + 5.0
    while store.write_stamps("u1"):
        assert time.monotonic() < deadline, "the old stamp row was not pruned"
        time.sleep(0.05)
    loads = _spy(store, "query")
    cache.refresh("u1")  # the row's removal makes the cache reload, once
    assert len(_lexical_ids(cache, "u1")) == 1
    assert any(c["collection"] == store.memories for c in loads)


def test_a_cache_refuses_a_max_age_past_stamp_pruning(store: MilvusBackend) -> None:
    from hindsight_lg.backends.milvus._stamps import PRUNE_S

    with pytest.raises(ValueError, match="max_age_s"):
        CachedBackend(store, ttl_s=10.0, max_age_s=PRUNE_S)
