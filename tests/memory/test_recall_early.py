"""A recall past its deadline returns what its dense search found, if it is done."""

from __future__ import annotations

import time
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.cached import CachedBackend
from hindsight_lg.testing import HashingEmbedder
from tests.backends.test_cached_stamps import _Stamped


class _SlowLoad(_Stamped):
    """A server-like store (write stamps) whose tenant loads take 0.6 s once armed."""

    armed = False

    def query(self, *args: Any, **kwargs: Any) -> Any:
        if self.armed:
            time.sleep(0.6)
        return super().query(*args, **kwargs)


def _evicted_recall(question: str) -> Any:
    store = _SlowLoad()
    cache = CachedBackend(store, ttl_s=10.0)  # type: ignore[arg-type]
    with HindsightMemory(cache, HashingEmbedder()) as memory:
        memory.capture("I prefer green tea over coffee", namespace="u1")
        memory.capture("My sister Mei lives in Chengdu", namespace="u1")
        memory.flush()
        cache.invalidate("u1")  # evicted: the next recall must load the tenant
        store.armed = True
        result = memory.recall(question, namespace="u1", timeout=0.2)
        contents = {r.id: r.content for r in memory.list_memories("u1")}
    return result, contents


def test_a_tenant_still_loading_at_the_deadline_gets_its_dense_hits() -> None:
    """The server's dense search was back: the turn gets its memory, marked timed out."""
    result, contents = _evicted_recall("which tea do I prefer?")
    assert result.timed_out is True
    assert ["I prefer green tea over coffee"] == [contents[i] for i in result.ids]
    assert result.to_prompt().count("green tea") == 1


def test_past_the_deadline_an_unrelated_question_still_gets_nothing() -> None:
    """The dense hits are held to the relevance rule like any recall's."""
    result, _ = _evicted_recall("What is the boiling point of water at sea level?")
    assert (True, []) == (result.timed_out, result.ids)
