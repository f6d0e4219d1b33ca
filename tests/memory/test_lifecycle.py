"""Lifecycle: strength, reinforcement, decay to cold and archived, restore, forget."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg import (
    ConflictError,
    HindsightMemory,
    Kind,
    MemoryRecord,
    Policy,
    Status,
)
from hindsight_lg.memory.lifecycle import strength as lifecycle
from hindsight_lg.testing import FrozenClock

DAY = 86400.0


def _record(**changes: object) -> MemoryRecord:
    base = MemoryRecord(namespace="u", content="x", event_time=0.0, created_at=0.0)
    return base.replace(**changes)


@given(st.floats(0, 1), st.floats(0, 1), st.floats(0, 400))
def test_strength_never_grows_with_age(
    importance: float, other: float, days: float
) -> None:
    """An older memory is never stronger than the same memory when younger."""
    r = _record(importance=importance)
    assert lifecycle.strength(r, days * DAY) >= lifecycle.strength(r, (days + 1) * DAY)


@given(st.floats(0, 0.99), st.floats(0, 200))
def test_strength_grows_with_importance(importance: float, days: float) -> None:
    """A more important memory is at least as strong as a less important one."""
    low, high = _record(importance=importance), _record(importance=importance + 0.01)
    assert lifecycle.strength(high, days * DAY) >= lifecycle.strength(low, days * DAY)


def test_reinforce_grows_importance_logarithmically_and_stretches_half_life() -> None:
    """Each use adds less importance than the one before, and half-life grows."""
    r, policy = _record(importance=0.5, half_life_days=14.0), Policy()
    gains, half_lives = [], []
    for i in range(4):
        before = r.importance
        lifecycle.reinforce(r, policy, now=float(i))
        gains.append(r.importance - before)
        half_lives.append(r.half_life_days)
    assert gains == sorted(gains, reverse=True) and gains[-1] > 0
    assert half_lives == sorted(half_lives) and half_lives[0] > 14.0


def test_weaken_rejects_a_factor_outside_zero_one() -> None:
    """Weakening by a factor >= 1 is a caller mistake."""
    with pytest.raises(ValueError, match="between 0 and 1"):
        lifecycle.weaken(_record(), 1.5, 0.0)


def test_decay_moves_weak_memories_cold_then_archived(
    memory: HindsightMemory, clock: FrozenClock, namespace: str
) -> None:
    """A one-off query fades to cold within days and to archived later; a rule stays."""
    memory.capture("what's the weather in Paris tomorrow?", namespace=namespace)
    memory.remember("Always answer in French", namespace=namespace, kind=Kind.RULE)
    clock.advance(days=5)
    first = memory.decay(namespace)
    clock.advance(days=30)
    second = memory.decay(namespace)
    by_kind = {r.kind: r.status for r in memory.list_memories(namespace, history=True)}
    assert (first["cold"], second["archived"]) == (1, 1)
    assert by_kind == {Kind.QUERY: Status.ARCHIVED, Kind.RULE: Status.ACTIVE}


def test_restore_brings_an_archived_memory_back(
    memory: HindsightMemory, clock: FrozenClock, namespace: str
) -> None:
    """restore() makes an archived memory active and recallable again."""
    [query] = memory.capture(
        "what's the weather in Paris tomorrow?", namespace=namespace
    )
    clock.advance(days=40)
    memory.decay(namespace)
    memory.decay(namespace)
    assert memory.recall("weather Paris", namespace=namespace, timeout=None).ids == []
    restored = memory.restore(namespace, query.id)
    assert restored.status is Status.ACTIVE
    assert memory.recall("weather Paris", namespace=namespace, timeout=None).ids == [
        query.id
    ]


def test_superseded_memories_cannot_be_restored(
    memory: HindsightMemory, namespace: str
) -> None:
    """History stays history: restoring a superseded memory is refused."""
    [old] = memory.capture("I don't like Redis for caching", namespace=namespace)
    memory.capture("Actually Redis is fine for caching now", namespace=namespace)
    with pytest.raises(ValueError, match="superseded"):
        memory.restore(namespace, old.id)


def test_update_is_compare_and_swap(memory: HindsightMemory, namespace: str) -> None:
    """An update with a stale version raises ConflictError and changes nothing."""
    r = memory.remember("Prefers tea", namespace=namespace, kind="preference")
    updated = memory.update(namespace, r.id, expected_version=r.version, importance=0.9)
    with pytest.raises(ConflictError):
        memory.update(namespace, r.id, expected_version=r.version, importance=0.1)
    stored = memory.get(namespace, r.id)
    assert stored is not None and (stored.importance, stored.version) == (
        0.9,
        updated.version,
    )


def test_forget_cascades_through_records_edges_and_audit(
    memory: HindsightMemory, namespace: str
) -> None:
    """forget() of a namespace leaves no record, edge or audit entry behind."""
    memory.capture(
        "帮我查一下上海明天的天气，另外我下周三要去上海出差，记得提醒我带伞",
        namespace=namespace,
    )
    ids = [r.id for r in memory.list_memories(namespace, history=True)]
    assert memory.forget(namespace) == 2
    assert memory.list_memories(namespace, history=True) == []
    assert memory.backend.edges(namespace, ids) == []
    assert memory.audit(namespace) == []


def test_consolidation_makes_one_semantic_memory_and_is_safe_twice(
    memory: HindsightMemory, clock: FrozenClock, namespace: str
) -> None:
    """Related episodes become one derived semantic memory; a second run adds none."""
    for i in range(4):
        memory.capture(
            f"Went hiking in the Harz mountains with Tom, day {i} of the trip",
            namespace=namespace,
            source_ids=[f"d{i}"],
        )
        clock.advance(days=1)
    memory.capture("My favourite band is Radiohead", namespace=namespace)
    [semantic] = memory.consolidate(namespace)
    again = memory.consolidate(namespace)
    derived = {
        e.dst
        for e in memory.edges(namespace, semantic.id)
        if e.type.value == "derived_from"
    }
    statuses = {r.id: r.status for r in memory.list_memories(namespace, history=True)}
    assert again == []
    assert len(derived) == 4 and all(statuses[i] is Status.COLD for i in derived)
    assert sorted(semantic.source_ids) == ["d0", "d1", "d2", "d3"]
    assert semantic.tier.value == "semantic"
