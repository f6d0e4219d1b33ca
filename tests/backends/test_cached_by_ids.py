"""A server's dense hits, during a recall's stamps check, come back as ids.

The store below is the in-memory backend with the stamp table of
``test_cached_stamps.py`` and an ids-only search, both counted; the same
path runs against a real Milvus server in ``tests/server/test_by_ids.py``.
"""

from __future__ import annotations

import contextvars
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hindsight_lg import MemoryRecord
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.cached import CachedBackend
from tests.backends.test_cached_stamps import EMB, _records, _Stamped


class _Searched(_Stamped):
    """A stamped store that also answers dense search with ids only."""

    def __init__(self) -> None:
        super().__init__()
        self.full = 0
        self.by_ids = 0

    def search_dense(self, *args: Any, **kwargs: Any) -> Any:
        self.full += 1
        return super().search_dense(*args, **kwargs)

    def search_dense_ids(
        self, namespace: str, vector: Any, where: Where, *, limit: int
    ) -> list[tuple[str, float]]:
        self.by_ids += 1
        hits = self.inner.search_dense(namespace, vector, where, limit=limit)
        return [(h.record.id, h.score) for h in hits]


def _query() -> list[float]:
    return [float(x) for x in EMB.embed(["note about tea"])[0]]


def _cached(n: int = 6) -> tuple[_Searched, CachedBackend]:
    store = _Searched()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    cache.upsert("u", _records(n))
    cache.search_lexical("u", ["tea"], Where(), limit=99)  # cached now
    return store, cache


def _beside(cache: CachedBackend) -> list[tuple[str, float, str]]:
    """The recall's dense search, on another thread in a copy of its context."""
    run = contextvars.copy_context().run
    with ThreadPoolExecutor(1) as pool:
        hits = pool.submit(
            run, cache.search_dense, "u", _query(), Where(), limit=4
        ).result()
    return [(h.record.id, h.score, h.record.content) for h in hits]


def test_a_recall_s_dense_search_asks_the_store_for_ids_only() -> None:
    """Beside the recall's check the store sends ids; the hits are its full search's."""
    store, cache = _cached()
    expected = [
        (h.record.id, h.score, h.record.content)
        for h in store.inner.search_dense("u", _query(), Where(), limit=4)
    ]
    gets = store.gets
    cache.refresh("u")
    assert expected == _beside(cache)
    assert (1, 0, gets) == (store.by_ids, store.full, store.gets)


def test_a_memory_another_process_changed_shows_its_new_words() -> None:
    """The check finds the tenant behind and reloads it before the ids are resolved."""
    store, cache = _cached()
    first = store.inner.search_dense("u", _query(), Where(), limit=1)[0].record
    changed = first.replace(content="note 0 about green tea, changed elsewhere")
    store.other_writes("u", [changed])
    cache.refresh("u")
    shown = {memory_id: content for memory_id, _, content in _beside(cache)}
    assert changed.content == shown[first.id]


def test_a_hit_the_cache_lacks_is_read_by_its_id() -> None:
    """A memory written after the check (the cache not told) still comes back."""
    store, cache = _cached(3)
    cache.refresh("u")
    late = MemoryRecord(namespace="u", content="note about tea", dense=_query())
    store.inner.upsert("u", [late])  # after the check: not in the cache
    gets = store.gets
    found = {memory_id: content for memory_id, _, content in _beside(cache)}
    assert late.content == found[late.id]
    assert gets + 1 == store.gets


def test_a_search_outside_a_recall_s_check_sends_the_full_search() -> None:
    """No check in this context, or one older than check_s: the store's records."""
    store, cache = _cached()
    cache.search_dense("u", _query(), Where(), limit=4)
    assert (0, 1) == (store.by_ids, store.full)

    cache.check_s = 0.01
    cache.refresh("u")
    time.sleep(0.05)
    cache.search_dense("u", _query(), Where(), limit=4)
    assert (0, 2) == (store.by_ids, store.full)


def test_vectors_asked_send_the_full_search() -> None:
    """The hop's lenders need the hits' vectors, which the cache does not keep."""
    store, cache = _cached()
    cache.refresh("u")
    hits = cache.search_dense("u", _query(), Where(), limit=4, vectors=True)
    assert hits and all(h.record.dense for h in hits)
    assert (0, 1) == (store.by_ids, store.full)


def test_a_tenant_not_cached_yet_gets_the_full_search() -> None:
    """Its check is loading it: the store's records, not ids and a read by id."""
    store = _SlowLoad()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    store.inner.upsert("u", _records(6))
    gets = store.gets
    cache.refresh("u")
    assert store.loading.wait(5)  # the check's load has begun, and waits
    try:
        found = _beside(cache)
    finally:
        store.release.set()
    assert found and (0, 1) == (store.by_ids, store.full)
    assert gets == store.gets


class _SlowLoad(_Searched):
    """A store whose tenant load waits until the test releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.loading = threading.Event()
        self.release = threading.Event()

    def query(self, *args: Any, **kwargs: Any) -> Any:
        self.loading.set()
        self.release.wait(5)
        return super().query(*args, **kwargs)
