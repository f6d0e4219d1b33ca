"""Recall deadlines drop memories only when the store is slow, not at warm-up or under concurrency."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.memory._coalesce import CoalescingEmbedder
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


class SlowModel(HashingEmbedder):
    """A hashing embedder with a model's costs: a slow first call, then per call."""

    def __init__(self, first: float = 0.0, each: float = 0.0) -> None:
        super().__init__()
        self.first, self.each, self.calls = first, each, 0
        self.armed = False  # costs apply once armed, after the memories are written

    def embed(self, texts: Sequence[str]) -> Vectors:
        if self.armed:
            self.calls += 1
            time.sleep(self.first if self.calls == 1 else self.each)
        return super().embed(texts)


def test_opening_memory_warms_up_so_the_first_recall_keeps_its_memories() -> None:
    """from_uri loads the model up front: a first recall under 0.2 s finds the memory."""
    model = SlowModel(first=0.6)  # the model's load, on its first call
    model.armed = True
    with HindsightMemory.from_uri(":memory:", embedder=model) as memory:
        assert model.calls >= 1  # loaded while opening (the wake rule is measured too)
        memory.capture("I prefer green tea over coffee", namespace="u1")
        first = memory.recall("which tea do I prefer?", namespace="u1", timeout=0.2)
    assert (False, 1) == (first.timed_out, len(first.ids))


def test_warm_up_by_hand_for_memory_built_from_parts() -> None:
    """warm_up() does for a hand-built engine what from_uri does."""
    model = SlowModel(first=0.6)
    with HindsightMemory(InMemoryBackend(), model) as memory:
        memory.capture("I prefer green tea over coffee", namespace="u1")
        model.armed = True
        memory.warm_up()
        first = memory.recall("which tea do I prefer?", namespace="u1", timeout=0.2)
    assert (False, 1) == (first.timed_out, len(first.ids))


def test_warm_up_recalls_once_so_a_first_recall_builds_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Reading a query builds tables (about 0.15 s) once: at warm-up, not in a deadline."""
    seen: list[tuple[str, Any]] = []
    real = HindsightMemory.recall

    def spy(self: HindsightMemory, query: str, **kwargs: Any) -> Any:
        seen.append((kwargs["namespace"], kwargs.get("timeout", "default")))
        return real(self, query, **kwargs)

    monkeypatch.setattr(HindsightMemory, "recall", spy)
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        memory.warm_up()
        assert memory.namespaces() == []  # the warm-up tenant holds nothing
    assert seen == [("hindsight-warm-up", None)]  # one recall, with no deadline


class SlowLoad:
    """An in-memory store whose full-namespace reads (the read cache's load) are slow."""

    def __init__(self, seconds: float) -> None:
        self.inner = InMemoryBackend()
        self.seconds = seconds

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def query(self, namespace: str, where: Any, **kwargs: Any) -> Any:
        # Only the cache's load reads through here (the engine's reads are
        # served by the cache); it reads vectors or not depending on the store.
        time.sleep(self.seconds)
        return self.inner.query(namespace, where, **kwargs)


def _first_recall(warm: Sequence[str]) -> Any:
    store = SlowLoad(0.6)
    HindsightMemory(store.inner, HashingEmbedder()).capture(  # type: ignore[arg-type]
        "I prefer green tea over coffee", namespace="u1"
    )
    with HindsightMemory(store, HashingEmbedder()) as memory:  # type: ignore[arg-type]
        memory.warm_up(namespaces=warm)
        return memory.recall("which tea do I prefer?", namespace="u1", timeout=0.2)


def test_warm_up_loads_named_namespaces_so_their_first_recall_keeps_its_memories() -> (
    None
):
    """A namespace slow to load misses a first recall's deadline unless warmed up.

    Past the deadline the recall keeps what its dense search (the store's,
    beside the load) found; warmed up, it is the whole recall in time.
    """
    cold, warm = _first_recall([]), _first_recall(["u1"])
    assert (cold.timed_out, len(cold.ids)) == (True, 1)
    assert (warm.timed_out, len(warm.ids)) == (False, 1)


def test_a_slow_recall_after_warm_up_still_times_out() -> None:
    """The deadline still holds: a recall whose model stalls returns nothing."""
    model = SlowModel(each=0.6)
    with HindsightMemory(InMemoryBackend(), model) as memory:
        memory.capture("I prefer green tea over coffee", namespace="u1")
        model.armed = True
        memory.warm_up()  # the first (free) call
        late = memory.recall("which tea do I prefer?", namespace="u1", timeout=0.2)
    assert (True, []) == (late.timed_out, late.ids)


class SlowStore(InMemoryBackend):
    """A store whose dense search takes 0.3 s once armed (a busy server)."""

    armed = False
    searches = 0

    def search_dense(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            type(self).searches += 1
            time.sleep(0.3)
        return super().search_dense(*args, **kwargs)


async def test_eight_concurrent_turns_do_not_queue_past_the_deadline() -> None:
    """Eight arecalls at once each get a thread: none waits behind another's search."""
    users = [f"u{i}" for i in range(8)]
    store = SlowStore()
    # One dense search per recall: the second hop would add another 0.3 s.
    one_search = Policy(hop_docs=0)
    with HindsightMemory(store, HashingEmbedder(), policy=one_search) as memory:
        for user in users:
            memory.capture("I prefer green tea over coffee", namespace=user)
        for user in users:  # warm every namespace
            await memory.arecall("tea", namespace=user, timeout=None)
        store.armed = True
        results = await asyncio.gather(
            *(memory.arecall("tea?", namespace=u, timeout=0.5) for u in users)
        )
    assert 8 <= SlowStore.searches
    assert [False] * 8 == [r.timed_out for r in results]


class CountingModel(HashingEmbedder):
    """Counts calls and texts; each call takes a while, as a model's forward pass."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.batches.append(len(texts))
        time.sleep(0.1)
        return super().embed(texts)


def test_concurrent_embeds_share_a_batch_and_get_their_own_rows() -> None:
    """Eight threads embedding at once make at most two model calls, each row its own."""
    inner = CountingModel()
    shared = CoalescingEmbedder(inner)
    start = threading.Barrier(8)
    out: dict[int, Vectors] = {}

    def one(i: int) -> None:
        start.wait()
        out[i] = shared.embed([f"question {i}", f"context {i}"])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(inner.batches) <= 2 and 16 == sum(inner.batches)
    expected = HashingEmbedder()
    for i in range(8):
        np.testing.assert_allclose(
            expected.embed([f"question {i}", f"context {i}"]), out[i]
        )


def test_a_failed_batch_raises_in_every_waiting_caller() -> None:
    """When the model fails, each caller of that batch gets the error, and the next call works."""

    class Flaky(HashingEmbedder):
        fail = True

        def embed(self, texts: Sequence[str]) -> Vectors:
            if self.fail:
                raise RuntimeError("model crashed")
            return super().embed(texts)

    inner = Flaky()
    shared = CoalescingEmbedder(inner)
    with pytest.raises(RuntimeError, match="model crashed"):
        shared.embed(["x"])
    inner.fail = False
    assert (1, inner.dim) == shared.embed(["x"]).shape
