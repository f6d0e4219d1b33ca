"""A recall's dense search runs beside its other paths' searches."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import ForwardingBackend, InMemoryBackend, Where
from hindsight_lg.backends.base import Hit
from hindsight_lg.testing import HashingEmbedder

DENSE_S = 0.3


class SlowDense(ForwardingBackend):
    """A store whose dense search takes a server's round trip; lexical is instant."""

    def __init__(self, inner: InMemoryBackend) -> None:
        super().__init__(inner)
        self.slow = False
        self.events: list[tuple[str, float]] = []
        self._lock = threading.Lock()

    def _note(self, what: str) -> None:
        with self._lock:
            self.events.append((what, time.monotonic()))

    def search_dense(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        if self.slow:
            self._note("dense start")
            time.sleep(DENSE_S)
        hits = super().search_dense(
            namespace, vector, where, limit=limit, vectors=vectors
        )
        if self.slow:
            self._note("dense end")
        return hits

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        if self.slow:
            self._note("lexical")
        return super().search_lexical(namespace, terms, where, limit=limit)


def _memory() -> tuple[HindsightMemory, SlowDense]:
    store = SlowDense(InMemoryBackend())
    memory = HindsightMemory(store, HashingEmbedder(), cache=False)
    memory.capture("I moved to Lisbon last spring for the new job.", namespace="u")
    memory.capture("My sister Mei teaches piano in Porto.", namespace="u")
    memory.flush()
    return memory, store


def test_lexical_searches_run_while_the_dense_search_waits() -> None:
    """Every lexical search of a recall starts before its slow dense search ends."""
    memory, store = _memory()
    store.slow = True
    result = memory.recall("Where did I move for the job?", namespace="u", timeout=None)
    end = next(t for what, t in store.events if what == "dense end")
    lexical = [t for what, t in store.events if what == "lexical"]
    assert lexical and all(t < end for t in lexical[:2]), store.events
    assert any("Lisbon" in m.record.content for m in result.memories)


def test_a_recall_with_a_slow_dense_search_still_meets_its_deadline() -> None:
    """The dense search's wait is the recall's; a deadline past it keeps the hits."""
    memory, store = _memory()
    store.slow = True
    started = time.monotonic()
    result = memory.recall("Who teaches piano?", namespace="u", timeout=DENSE_S * 10)
    assert not result.timed_out and time.monotonic() - started < DENSE_S * 10
    assert any("Mei" in m.record.content for m in result.memories)
