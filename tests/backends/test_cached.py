"""The write-through read cache answers exactly like the backend behind it."""

from __future__ import annotations

import random
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import Edge, EdgeType, HindsightMemory, MemoryRecord
from hindsight_lg._text import terms
from hindsight_lg.backends.base import Hit, Where
from hindsight_lg.backends.cached import CachedBackend
from hindsight_lg.backends.handle import with_read_cache
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.model import Scope, Status
from hindsight_lg.testing import HashingEmbedder

WORDS = ["tea", "coffee", "Berlin", "hiking", "Redis", "上海", "天气", "wedding"]
EMB = HashingEmbedder(dim=32)

_record = st.builds(
    lambda words, kind, status, t, agent, scope: MemoryRecord(
        namespace="u",
        content=" ".join(words),
        kind=kind,
        status=status,
        event_time=1e9 + t,
        agent_id=agent,
        scope=scope,
        dense=EMB.embed([" ".join(words)])[0].tolist(),
    ),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
    st.sampled_from(["fact", "preference", "query"]),
    st.sampled_from(["active", "cold", "superseded"]),
    st.floats(0, 1e6),
    st.sampled_from(["", "a", "b"]),
    st.sampled_from(["private", "team"]),
)
_where = st.builds(
    Where,
    statuses=st.sampled_from([(), ("active",), ("active", "cold")]),
    reader=st.sampled_from([None, "a", "b"]),
    since=st.sampled_from([None, 1e9 + 5e5]),
)


def _pair() -> tuple[CachedBackend, InMemoryBackend]:
    reference = InMemoryBackend()
    return CachedBackend(InMemoryBackend()), reference


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_record, min_size=1, max_size=12),
    st.lists(st.integers(0, 11), max_size=4),
    _where,
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_cache_matches_reference_after_writes(
    records: list[MemoryRecord], deleted: list[int], where: Where, query: list[str]
) -> None:
    """Queries, lexical search, edges and counts agree with the uncached reference."""
    cached, reference = _pair()
    cached.query("u", Where(statuses=()))  # load the namespace before the writes
    for backend in (cached, reference):
        backend.upsert("u", records)
        backend.add_edges(
            "u",
            [
                Edge("u", a.id, b.id, EdgeType.PRECEDES)
                for a, b in zip(records, records[1:], strict=False)
            ],
        )
        doomed = [records[i].id for i in deleted if i < len(records)]
        backend.delete("u", doomed)
        backend.delete_edges("u", doomed)
    ids = [r.id for r in records]
    q = terms(" ".join(query))
    assert [r.id for r in cached.query("u", where)] == [
        r.id for r in reference.query("u", where)
    ]
    assert {
        h.record.id: round(h.score, 6)
        for h in cached.search_lexical("u", q, where, limit=50)
    } == {
        h.record.id: round(h.score, 6)
        for h in reference.search_lexical("u", q, where, limit=50)
    }
    assert {e.key for e in cached.edges("u", ids)} == {
        e.key for e in reference.edges("u", ids)
    }
    assert cached.count("u", where) == reference.count("u", where)


def test_engines_sharing_a_milvus_backend_share_one_cache(tmp_path: object) -> None:
    """Two wrappers of one Milvus backend are the same cache, so writes are seen."""
    backend = MilvusBackend(str(tmp_path) + "/m.db")
    backend.setup(dim=EMB.dim, model_id=EMB.model_id)
    first, second = with_read_cache(backend), with_read_cache(backend)
    assert first is second
    assert second.query("u", Where()) == []
    record = MemoryRecord(
        namespace="u",
        content="tea in Berlin",
        dense=EMB.embed(["tea in Berlin"])[0].tolist(),
    )
    first.upsert("u", [record])
    assert [r.id for r in second.query("u", Where())] == [record.id]
    assert [
        h.record.id
        for h in second.search_lexical("u", terms("Berlin"), Where(), limit=5)
    ] == [record.id]
    backend.close()


def test_an_uncached_engine_writes_through_a_cache_another_engine_holds(
    tmp_path: Path,
) -> None:
    """cache=False on a backend another engine caches: a forget there is seen at once."""
    backend = MilvusBackend(str(tmp_path / "m.db"))
    cached = HindsightMemory(backend, HashingEmbedder())
    kept = cached.remember("I prefer green tea", namespace="u")
    assert [r.id for r in cached.list_memories("u")] == [kept.id]  # now cached
    one_shot = HindsightMemory(backend, HashingEmbedder(), cache=False)
    assert one_shot.backend is cached.backend
    one_shot.forget("u")
    assert cached.list_memories("u") == []
    one_shot.close()
    cached.close()
    backend.close()


def test_an_uncached_engine_alone_reads_the_store_directly(tmp_path: Path) -> None:
    """cache=False with no cache in the process: reads load no namespace cache."""
    backend = MilvusBackend(str(tmp_path / "m.db"))
    engine = HindsightMemory(backend, HashingEmbedder(), cache=False)
    engine.remember("I prefer green tea", namespace="u")
    assert len(engine.list_memories("u")) == 1
    assert engine.backend is backend
    engine.close()
    backend.close()


class _Counting:
    """Forwards to a backend and counts the dense searches that reach it."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.searches = 0

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def search_dense(self, *args: object, **kwargs: object) -> object:
        self.searches += 1
        return self.inner.search_dense(*args, **kwargs)  # type: ignore[attr-defined]


def _records(n: int, namespace: str = "u", scale: float = 1.0) -> list[MemoryRecord]:
    rng = random.Random(n)
    out = []
    for i in range(n):
        text = " ".join(rng.choices(WORDS, k=4)) + f" note {i}"
        out.append(
            MemoryRecord(
                namespace=namespace,
                content=text,
                status=rng.choice([Status.ACTIVE, Status.COLD, Status.SUPERSEDED]),
                agent_id=rng.choice(["", "a", "b"]),
                scope=rng.choice([Scope.PRIVATE, Scope.TEAM]),
                dense=(EMB.embed([text])[0] * scale).tolist(),
            )
        )
    return out


def _ranked(hits: list[Hit]) -> list[tuple[str, float]]:
    return sorted(
        ((h.record.id, round(h.score, 4)) for h in hits), key=lambda x: (-x[1], x[0])
    )


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_record, min_size=1, max_size=12),
    st.lists(st.integers(0, 11), max_size=4),
    _where,
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_cached_dense_search_matches_reference_after_writes(
    records: list[MemoryRecord], deleted: list[int], where: Where, query: list[str]
) -> None:
    """Dense search from the cache finds the reference's records with its scores."""
    cached, reference = _pair()
    cached.query("u", Where(statuses=()))  # load the namespace before the writes
    for backend in (cached, reference):
        backend.upsert("u", records)
        backend.delete("u", [records[i].id for i in deleted if i < len(records)])
    vector = EMB.embed([" ".join(query)])[0].tolist()
    assert _ranked(cached.search_dense("u", vector, where, limit=50)) == _ranked(
        reference.search_dense("u", vector, where, limit=50)
    )


def test_lite_dense_search_is_served_from_the_cache_as_milvus_would(
    tmp_path: Path,
) -> None:
    """On a Lite file, dense search skips Milvus and returns Milvus's own answer."""
    milvus = MilvusBackend(str(tmp_path / "m.db"))
    milvus.setup(dim=EMB.dim, model_id=EMB.model_id)
    # Vectors of length 3: Milvus's COSINE normalises them, and so must the cache.
    milvus.upsert("u", _records(60, scale=3.0))
    milvus.upsert("v", _records(5, namespace="v"))
    counting = _Counting(milvus)
    cache = CachedBackend(counting)  # type: ignore[arg-type]
    where = Where(statuses=("active", "cold"), reader="a")
    for words in (["tea", "Berlin"], ["wedding"], ["上海", "hiking", "Redis"]):
        vector = (EMB.embed([" ".join(words)])[0] * 0.5).tolist()
        got = cache.search_dense("u", vector, where, limit=7)
        assert _ranked(got) == _ranked(milvus.search_dense("u", vector, where, limit=7))
    assert counting.searches == 0
    shared = with_read_cache(milvus)
    assert isinstance(shared, CachedBackend) and shared.dense
    milvus.close()


def test_an_expiring_cache_leaves_dense_search_to_the_store() -> None:
    """A cache with a TTL (a server) may miss other processes' writes: Milvus searches."""
    counting = _Counting(InMemoryBackend())
    cache = CachedBackend(counting, ttl_s=10.0)  # type: ignore[arg-type]
    cache.upsert("u", _records(10))
    vector = EMB.embed(["tea"])[0].tolist()
    assert len(cache.search_dense("u", vector, Where(statuses=()), limit=3)) == 3
    assert counting.searches == 1


def test_an_expiring_cache_finds_a_memory_another_process_wrote() -> None:
    """A get by id misses nothing another replica wrote after the cache loaded."""
    inner = InMemoryBackend()
    cache = CachedBackend(inner, ttl_s=10.0)
    [first, other] = _records(2)
    cache.upsert("u", [first])
    assert [first.id] == [r.id for r in cache.get("u", [first.id])]  # loaded
    inner.upsert("u", [other])  # another process, past this cache
    got = cache.get("u", [first.id, other.id, other.id, "gone"])
    assert [first.id, other.id] == [r.id for r in got]
    exact = CachedBackend(InMemoryBackend())  # one process: the cache is the truth
    exact.upsert("u", [first])
    exact.get("u", [first.id])
    exact.inner.upsert("u", [other])
    assert [] == exact.get("u", [other.id])


def test_cache_memory_stays_within_max_bytes() -> None:
    """Namespaces are evicted beyond max_bytes; one larger than it goes to the store."""
    inner = InMemoryBackend()
    for ns in ("a", "b", "big"):
        inner.upsert(ns, _records(200 if ns == "big" else 40, namespace=ns))
    one = CachedBackend(InMemoryBackend())
    one.inner.upsert("a", _records(40, namespace="a"))
    one.query("a", Where())
    bound = int(one.nbytes() * 1.5)  # room for one small namespace, not two
    counting = _Counting(inner)
    cache = CachedBackend(counting, max_bytes=bound)  # type: ignore[arg-type]
    vector = EMB.embed(["tea"])[0].tolist()
    for ns in ("a", "b"):
        cache.search_dense(ns, vector, Where(statuses=()), limit=3)
        assert 0 < cache.nbytes() <= bound
    assert counting.searches == 0
    hits = cache.search_dense("big", vector, Where(statuses=()), limit=3)
    assert _ranked(hits) == _ranked(
        inner.search_dense("big", vector, Where(statuses=()), limit=3)
    )
    assert counting.searches == 1
    assert cache.nbytes() <= bound


def test_a_namespace_grown_past_the_bound_is_searched_by_the_store() -> None:
    """Writes that push a cached namespace past max_records hand it to the store."""
    counting = _Counting(InMemoryBackend())
    cache = CachedBackend(counting, max_records=30)  # type: ignore[arg-type]
    records = _records(40)
    cache.upsert("u", records[:20])
    vector = EMB.embed(["tea"])[0].tolist()
    cache.search_dense("u", vector, Where(statuses=()), limit=3)
    assert counting.searches == 0
    cache.upsert("u", records[20:])
    assert cache.nbytes() == 0
    cache.search_dense("u", vector, Where(statuses=()), limit=3)
    assert counting.searches == 1
    cache.delete("u", [r.id for r in records[:20]])
    cache.search_dense("u", vector, Where(statuses=()), limit=3)
    assert counting.searches == 1  # small enough again: cached once more


def test_with_read_cache_takes_a_memory_bound(tmp_path: Path) -> None:
    """max_bytes given to with_read_cache bounds the shared cache, evicting at once."""
    milvus = MilvusBackend(str(tmp_path / "m.db"))
    milvus.setup(dim=EMB.dim, model_id=EMB.model_id)
    cache = with_read_cache(milvus)
    assert isinstance(cache, CachedBackend)
    assert cache.max_bytes == 1 << 30
    for ns in ("a", "b"):
        cache.upsert(ns, _records(20, namespace=ns))
        cache.query(ns, Where())
    both = cache.nbytes()
    assert with_read_cache(milvus, max_bytes=both - 1) is cache
    assert cache.max_bytes == both - 1
    assert 0 < cache.nbytes() < both  # the least recently used namespace went
    milvus.close()


def test_a_recall_on_a_lite_file_reaches_no_milvus_search(tmp_path: Path) -> None:
    """The engine over a Lite file captures and recalls without one Milvus search."""
    milvus = MilvusBackend(str(tmp_path / "m.db"))
    counting = _Counting(milvus)
    memory = HindsightMemory(counting, EMB)  # type: ignore[arg-type]
    memory.capture("I prefer green tea over coffee", namespace="u")
    memory.capture("My sister lives in Berlin", namespace="u")
    found = memory.recall("does the user prefer tea?", namespace="u", timeout=None)
    assert "I prefer green tea over coffee" in [r.content for r in found.records]
    assert counting.searches == 0
    memory.close()
    milvus.close()


class _HeldLoad:
    """An in-memory backend whose reads of one namespace wait for a signal.

    The read takes its snapshot first and then waits, as a slow store query
    would after reading its rows.
    """

    def __init__(self, namespace: str) -> None:
        self.inner = InMemoryBackend()
        self.namespace = namespace
        self.entered = threading.Event()
        self.release = threading.Event()
        self.held = 1  # how many reads of the namespace to hold

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def query(self, namespace: str, where: Where, **kwargs: Any) -> list[MemoryRecord]:
        rows = self.inner.query(namespace, where, **kwargs)
        if namespace == self.namespace and self.held > 0:
            self.held -= 1
            self.entered.set()
            assert self.release.wait(30), "the test never released the load"
        return rows


def _fact(namespace: str, text: str) -> MemoryRecord:
    return MemoryRecord(
        namespace=namespace, content=text, dense=EMB.embed([text])[0].tolist()
    )


def test_a_namespace_loading_does_not_hold_up_other_tenants() -> None:
    """While one namespace loads, reads of another cached namespace are answered."""
    store = _HeldLoad("big")
    cache = CachedBackend(store)  # type: ignore[arg-type]
    cache.upsert("big", [_fact("big", "tea in Berlin")])
    small = _fact("small", "coffee in Lisbon")
    cache.upsert("small", [small])
    assert [r.id for r in cache.query("small", Where())] == [small.id]  # cached
    loader = threading.Thread(target=cache.query, args=("big", Where()))
    loader.start()
    assert store.entered.wait(30)
    answered: list[list[str]] = []
    reader = threading.Thread(
        target=lambda: answered.append([r.id for r in cache.query("small", Where())])
    )
    reader.start()
    reader.join(10)  # on a cache that loads under its lock, this read waits
    held_up = reader.is_alive()
    store.release.set()
    loader.join(30)
    reader.join(30)
    assert not held_up and answered == [[small.id]]


def test_a_write_during_a_load_is_in_the_cache_after_it() -> None:
    """A record written while its namespace loads is read back once the load ends."""
    store = _HeldLoad("u")
    cache = CachedBackend(store)  # type: ignore[arg-type]
    first = _fact("u", "tea in Berlin")
    store.inner.upsert("u", [first])
    loader = threading.Thread(target=cache.query, args=("u", Where()))
    loader.start()
    assert store.entered.wait(30)  # the load's snapshot holds `first` only
    second = _fact("u", "coffee in Lisbon")
    writer = threading.Thread(target=cache.upsert, args=("u", [second]))
    writer.start()
    writer.join(10)
    store.release.set()
    loader.join(30)
    writer.join(30)
    assert {r.id for r in cache.query("u", Where())} == {first.id, second.id}
    hits = cache.search_lexical("u", terms("Lisbon"), Where(), limit=5)
    assert [h.record.id for h in hits] == [second.id]


def test_concurrent_writes_reads_and_reloads_leave_the_cache_equal_to_the_store() -> (
    None
):
    """Four threads write, delete, invalidate and read; the cache ends as the store is."""
    store = InMemoryBackend()
    cache = CachedBackend(store)
    spaces = ("a", "b")

    def work(seed: int) -> None:
        rng = random.Random(seed)
        mine: list[MemoryRecord] = []
        for i in range(150):
            ns = rng.choice(spaces)
            roll = rng.random()
            if roll < 0.5:
                record = _fact(
                    ns, f"fact {seed} {i} about {rng.choice(['tea', 'sea'])}"
                )
                cache.upsert(ns, [record])
                mine.append(record)
            elif roll < 0.65 and mine:
                gone = mine.pop(rng.randrange(len(mine)))
                cache.delete(gone.namespace, [gone.id])
            elif roll < 0.75:
                cache.invalidate(ns)  # the next read loads it again, maybe mid-write
            else:
                cache.query(ns, Where(), limit=10_000)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    # Writes are counted only while their namespace loads: nothing is left to
    # grow with the number of tenants a long-lived process has served.
    assert cache._writes == {} and cache._loading == {}
    for ns in spaces:
        truth = {r.id for r in store.query(ns, Where(), limit=10_000)}
        assert {r.id for r in cache.query(ns, Where(), limit=10_000)} == truth
        for word in ("tea", "sea"):
            hits = cache.search_lexical(ns, terms(word), Where(), limit=10_000)
            expected = store.search_lexical(ns, terms(word), Where(), limit=10_000)
            assert {h.record.id for h in hits} == {h.record.id for h in expected}


@pytest.mark.parametrize("ttl_s", [None, 10.0])
def test_a_cache_returns_hits_with_their_vectors_when_asked(
    milvus_pool: Any, namespace: str, ttl_s: float | None
) -> None:
    """Served from the cached rows (a Lite file) or by Milvus (a server's cache), and
    through a wrapper: without ``vectors`` the hits come bare, with it they carry
    the stored vectors."""
    from hindsight_lg.memory._traced import traced
    from hindsight_lg.testing.backend_contract import EMBEDDER, rec

    milvus = milvus_pool.get("hashing", dim=EMBEDDER.dim, model_id=EMBEDDER.model_id)
    stored = [rec(namespace, t) for t in ("green tea", "Redis caching")]
    milvus.upsert(namespace, stored)
    wrapped = traced(CachedBackend(milvus, ttl_s=ttl_s))
    query = stored[0].dense
    bare = wrapped.search_dense(namespace, query, Where(), limit=2)
    full = wrapped.search_dense(namespace, query, Where(), limit=2, vectors=True)
    assert [0, 0] == [len(h.record.dense) for h in bare]
    by_id = {r.id: r.dense for r in stored}
    for h in full:
        np.testing.assert_allclose(h.record.dense, by_id[h.record.id], atol=1e-6)
    assert sorted(by_id) == sorted(h.record.id for h in full)
