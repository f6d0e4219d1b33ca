"""A consolidation a crash interrupted is finished by the next run, never repeated."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.model import Edge, EdgeType, MemoryRecord, Status, Tier
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


class Killed(Exception):
    """Stands for a SIGKILL at one write."""


class OneFailure(InMemoryBackend):
    """Raises :class:`Killed` at the first write ``doomed`` picks, then works."""

    def __init__(self) -> None:
        super().__init__()
        self.doomed: Callable[[str, Sequence[Any]], bool] = lambda op, rows: False

    def _maybe(self, op: str, rows: Sequence[Any]) -> None:
        if self.doomed(op, rows):
            self.doomed = lambda op, rows: False
            raise Killed(op)

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        self._maybe("upsert", records)
        super().upsert(namespace, records)

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        self._maybe("edges", edges)
        super().add_edges(namespace, edges)


def _episodes(memory: HindsightMemory) -> None:
    for topic in ("hiking in the Harz with Tom", "cooking ramen with Aiko"):
        for day in range(3):
            memory.capture(f"Went {topic}, day {day} of the trip", namespace="u")


def _cold_episodes(op: str, rows: Sequence[Any]) -> bool:
    return op == "upsert" and any(
        r.tier is Tier.EPISODIC and r.status is Status.COLD for r in rows
    )


def _derived_edges(op: str, rows: Sequence[Any]) -> bool:
    return op == "edges" and any(e.type is EdgeType.DERIVED_FROM for e in rows)


@pytest.mark.parametrize("kill_at", [_cold_episodes, _derived_edges])
def test_an_interrupted_consolidation_is_rolled_forward(
    kill_at: Callable[[str, Sequence[Any]], bool],
) -> None:
    """After a kill mid-consolidation, the next run ends with one summary per cluster."""
    backend = OneFailure()
    memory = HindsightMemory(backend, HashingEmbedder(dim=64), cache=False)
    _episodes(memory)
    backend.doomed = kill_at
    with pytest.raises(Killed):
        memory.consolidate("u")
    memory.consolidate("u")
    rows = memory.list_memories("u", history=True)
    summaries = [r for r in rows if r.tier is Tier.SEMANTIC]
    episodes = [r for r in rows if r.tier is Tier.EPISODIC]
    derived = [
        e
        for s in summaries
        for e in memory.edges("u", s.id)
        if e.type is EdgeType.DERIVED_FROM and e.src == s.id
    ]
    assert len(summaries) == 2
    assert sorted(e.dst for e in derived) == sorted(r.id for r in episodes)
    assert {r.status for r in episodes} == {Status.COLD}
    assert not any("consolidating" in s.meta for s in summaries)
    memory.close()
