"""A server cache kept current by write stamps instead of reloads on a timer.

The store below is the in-memory backend with a stamp table the test moves
by hand, standing for another process's writes; the same rules run against
a real Milvus server in ``tests/server/test_read_consistency.py``.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from hindsight_lg import MemoryRecord
from hindsight_lg.backends import ForwardingBackend
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.cached import CachedBackend
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.testing import HashingEmbedder

EMB = HashingEmbedder(dim=64)


class _Stamped(ForwardingBackend):
    """An in-memory store that keeps other writers' stamps, counting reads."""

    def __init__(self) -> None:
        super().__init__(InMemoryBackend())
        self.stamps: dict[str, dict[str, int]] = {}
        self.stamp_reads = 0
        self.loads = 0
        self.gets = 0

    def write_stamps(self, namespace: str) -> dict[str, int] | None:
        self.stamp_reads += 1
        return dict(self.stamps.get(namespace, {}))

    def query(self, *args: Any, **kwargs: Any) -> Any:
        self.loads += 1
        return super().query(*args, **kwargs)

    def get(self, *args: Any, **kwargs: Any) -> Any:
        self.gets += 1
        return super().get(*args, **kwargs)

    def other_writes(self, namespace: str, records: list[MemoryRecord]) -> None:
        """Another process's upsert: the store has it, the cache was not told."""
        self.inner.upsert(namespace, records)
        self._bump(namespace)

    def other_deletes(self, namespace: str, ids: list[str]) -> None:
        self.inner.delete(namespace, ids)
        self._bump(namespace)

    def _bump(self, namespace: str) -> None:
        mine = self.stamps.setdefault(namespace, {})
        mine["other"] = mine.get("other", 0) + 1


def _records(n: int, namespace: str = "u") -> list[MemoryRecord]:
    texts = [f"note {i} about tea" for i in range(n)]
    return [
        MemoryRecord(namespace=namespace, content=t, dense=v.tolist())
        for t, v in zip(texts, EMB.embed(texts), strict=True)
    ]


def _ids(cache: CachedBackend, namespace: str = "u") -> set[str]:
    hits = cache.search_lexical(namespace, ["tea"], Where(), limit=99)
    return {h.record.id for h in hits}


def test_a_recall_of_an_unchanged_tenant_reads_only_the_stamps() -> None:
    store = _Stamped()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    cache.upsert("u", _records(4))
    assert len(_ids(cache)) == 4
    loads, gets = store.loads, store.gets

    for _ in range(3):  # three recalls
        cache.refresh("u")
        found = sorted(_ids(cache))
        assert cache.live("u", found) == found

    assert (store.loads, store.gets) == (loads, gets)
    assert store.stamp_reads == 1 + 3  # the load's, then one per recall


def test_another_writers_stamp_makes_the_next_recall_reload() -> None:
    store = _Stamped()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    cache.upsert("u", _records(2))
    assert len(_ids(cache)) == 2
    [new] = _records(3)[2:]

    store.other_writes("u", [new])
    assert new.id not in _ids(cache)  # checked a moment ago: served as held

    cache.refresh("u")
    assert new.id in _ids(cache)


def test_a_forgotten_memory_is_not_live_once_the_stamps_moved() -> None:
    store = _Stamped()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    doomed, kept = _records(2)
    cache.upsert("u", [doomed, kept])
    assert _ids(cache) == {doomed.id, kept.id}

    store.other_deletes("u", [doomed.id])

    # A live check outside a recall asks the stamps, sees them move, and
    # asks the store which ids it still holds.
    assert cache.live("u", [doomed.id, kept.id]) == [kept.id]
    cache.refresh("u")
    assert _ids(cache) == {kept.id}
    assert cache.live("u", [doomed.id, kept.id]) == [kept.id]


def test_reads_outside_a_recall_ask_again_after_check_s() -> None:
    store = _Stamped()
    cache = CachedBackend(store, ttl_s=10.0, check_s=0.05)  # type: ignore[arg-type]
    doomed, kept = _records(2)
    cache.upsert("u", [doomed, kept])
    assert len(_ids(cache)) == 2
    store.other_deletes("u", [doomed.id])

    time.sleep(0.06)
    assert _ids(cache) == {kept.id}


def test_a_tenant_is_reloaded_after_max_age_whatever_its_stamps() -> None:
    store = _Stamped()
    cache = CachedBackend(store, ttl_s=10.0, max_age_s=0.05)  # type: ignore[arg-type]
    cache.upsert("u", _records(2))
    assert len(_ids(cache)) == 2
    [lost] = _records(3)[2:]
    store.inner.upsert("u", [lost])  # a write whose writer died before its stamp

    time.sleep(0.06)
    assert lost.id in _ids(cache)


def test_a_store_without_stamps_keeps_the_timer_and_the_live_read() -> None:
    store = InMemoryBackend()
    cache = CachedBackend(store, ttl_s=10.0)
    doomed, kept = _records(2)
    cache.upsert("u", [doomed, kept])
    assert len(_ids(cache)) == 2
    store.delete("u", [doomed.id])  # behind the cache's back

    cache.refresh("u")  # nothing to check against
    assert cache.live("u", [doomed.id, kept.id]) == [kept.id]


class _SlowStamps(_Stamped):
    """Stamps that answer only once the test lets them, noting who waited."""

    def __init__(self) -> None:
        super().__init__()
        self.answer = threading.Event()
        self.armed = False
        self.timed_out = False
        self.dense_before_answer = False

    def write_stamps(self, namespace: str) -> dict[str, int] | None:
        if self.armed:  # a check made on the recall's own thread times out here
            self.armed = False
            self.timed_out = not self.answer.wait(2.0)
        return super().write_stamps(namespace)

    def search_dense(self, *args: Any, **kwargs: Any) -> Any:
        self.dense_before_answer = not self.answer.is_set()
        return super().search_dense(*args, **kwargs)


def test_the_stamps_check_runs_beside_the_dense_search() -> None:
    store = _SlowStamps()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    cache.upsert("u", _records(2))
    assert len(_ids(cache)) == 2
    [new] = _records(3)[2:]
    store.other_writes("u", [new])
    store.armed = True

    cache.refresh("u")  # returns while the stamps read is still waiting
    cache.search_dense("u", EMB.embed(["tea"])[0].tolist(), Where(), limit=5)
    store.answer.set()

    assert store.dense_before_answer  # the dense search did not wait for it
    assert new.id in _ids(cache)  # the first cached read waited, then reloaded
    assert not store.timed_out
    cache.close()


def test_a_failed_check_beside_the_recall_is_asked_again_by_its_live_check() -> None:
    store = _Stamped()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    cache.upsert("u", _records(2))
    assert len(_ids(cache)) == 2
    calls = {"n": 0}
    reads = store.write_stamps

    def flaky(namespace: str) -> dict[str, int] | None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise ConnectionError("server away")
        return reads(namespace)

    store.write_stamps = flaky  # type: ignore[method-assign]
    cache.refresh("u")
    found = sorted(_ids(cache))  # served as held a moment ago
    assert calls["n"] == 1
    # The check failed, so the recall's live check asks the stamps itself.
    assert cache.live("u", found) == found
    assert calls["n"] == 2
    cache.close()


class _Fetching(_Stamped):
    """Counts vector fetches; ``during`` runs inside the next one."""

    def __init__(self) -> None:
        super().__init__()
        self.fetches = 0
        self.store_searches = 0
        self.during: Any = None

    def query(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("vectors"):
            self.fetches += 1
            rows = super().query(*args, **kwargs)
            if self.during is not None:
                during, self.during = self.during, None
                during()
            return rows
        return super().query(*args, **kwargs)

    def search_dense(self, *args: Any, **kwargs: Any) -> Any:
        self.store_searches += 1
        return super().search_dense(*args, **kwargs)


def _vector(text: str) -> list[float]:
    return [float(x) for x in EMB.embed([text])[0]]


def test_a_server_cache_fetches_vectors_only_for_the_write_path() -> None:
    store = _Fetching()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    texts = ["green tea at dawn", "tea with the cat", "tea in lisbon", "tea", "tea?"]
    store.inner.upsert(
        "u", [MemoryRecord(namespace="u", content=t, dense=_vector(t)) for t in texts]
    )
    assert len(_ids(cache)) == 5  # a recall's path: loaded without vectors
    assert store.fetches == 0
    without = cache.nbytes()

    probe = _vector("the cat and the tea")
    want = store.inner.search_dense("u", probe, Where(), limit=3)
    for _ in range(2):  # the write path's near-duplicate check
        got = cache.search_dense_local("u", probe, Where(), limit=3)
        assert [h.record.id for h in got] == [h.record.id for h in want]
    assert store.fetches == 1  # fetched once, then served from the cache
    assert cache.nbytes() > without


def test_a_write_during_the_vector_fetch_keeps_its_vector() -> None:
    store = _Fetching()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    cache.upsert("u", _records(3))
    assert len(_ids(cache)) == 3
    [late] = _records(4)[3:]
    late.content = "a kettle of green tea"
    late.dense = _vector(late.content)
    seen: list[str] = []

    def race() -> None:  # a capture lands while the vectors are fetched
        cache.upsert("u", [late])
        searched = store.store_searches
        cache.search_dense_local("u", late.dense, Where(), limit=1)
        seen.append("store" if store.store_searches > searched else "cache")

    store.during = race
    probe = _vector("note 1 about tea")
    cache.search_dense_local("u", probe, Where(), limit=1)
    assert seen == ["store"]  # mid-fetch the cache's rows are not trusted

    searched = store.store_searches
    [hit] = cache.search_dense_local("u", late.dense, Where(), limit=1)
    assert hit.record.id == late.id and hit.score > 0.99
    assert store.store_searches == searched  # answered by the cache
