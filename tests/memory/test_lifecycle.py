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


def _decay_weekly(
    memory: HindsightMemory, clock: FrozenClock, ns: str, days: int
) -> None:
    for _ in range(days // 7):
        clock.advance(days=7)
        memory.decay(ns)


def test_weak_memories_that_matter_stay_cold_and_chatter_is_archived(
    memory: HindsightMemory, clock: FrozenClock, namespace: str
) -> None:
    """Archiving needs weakness and low importance: after 200 days only chatter goes."""
    said = {
        "I'm allergic to peanuts.": Status.COLD,
        "My sister Lena lives in Toronto.": Status.COLD,
        "I take the 7:40 train every morning.": Status.COLD,
        "haha that's so funny": Status.ARCHIVED,
        "What's the weather in Paris tomorrow?": Status.ARCHIVED,
    }
    for text in said:
        memory.capture(text, namespace=namespace)
    _decay_weekly(memory, clock, namespace, 200)
    rows = memory.list_memories(namespace, history=True)
    assert {r.content: r.status for r in rows} == said


@pytest.mark.parametrize(
    ("text", "kind", "kept"),
    [
        ("I take the 7:40 train every morning.", Kind.EVENT, True),
        ("我每天早上坐地铁上班。", Kind.EVENT, True),
        ("My brother Sam got engaged yesterday!", Kind.EVENT, True),
        ("Please remember that Leo is afraid of dogs.", Kind.EVENT, True),
        ("我对花生过敏，这个很重要。", Kind.EVENT, True),
        ("Always answer in French.", Kind.RULE, True),
        ("I went to the cinema yesterday.", Kind.EVENT, False),
        ("今天地铁好挤啊", Kind.EVENT, False),
        ("ugh Mondays, am I right", Kind.EVENT, False),
        ("哈哈哈太好笑了", Kind.EVENT, False),
        ("Can you tell me a joke about cats", Kind.EVENT, False),
        ("给我讲个笑话吧", Kind.EVENT, False),
        ("What's the weather in Paris tomorrow?", Kind.QUERY, False),
        ("I'm so stressed about work", Kind.EMOTION, False),
    ],
)
def test_what_is_kept_from_archive_is_read_from_the_memory(
    text: str, kind: Kind, kept: bool
) -> None:
    """Statements about the person and marked ones are kept; questions, chatter not."""
    record = _record(content=text, kind=kind, importance=Policy().importance(kind))
    assert (lifecycle.kept_from_archive(record, Policy()) is not None) == kept


def test_a_memory_that_misled_can_be_archived_however_personal() -> None:
    """weaken() lowers lasting importance too: a misleading memory may go."""
    record = _record(content="I take the 7:40 train every morning.", status="cold")
    lifecycle.weaken(record, 0.5, 0.0)
    assert lifecycle.decay_status(record, Policy(), 400 * DAY) is Status.ARCHIVED


def test_decay_dry_run_counts_without_changing_anything(
    memory: HindsightMemory, clock: FrozenClock, namespace: str
) -> None:
    """decay(dry_run=True) returns the counts a real run then produces, writes nothing."""
    memory.capture("what's the weather in Paris tomorrow?", namespace=namespace)
    memory.capture("I'm allergic to peanuts.", namespace=namespace)
    clock.advance(days=90)
    before = [(r.id, r.status, r.version) for r in memory.list_memories(namespace)]
    preview = memory.decay(namespace, dry_run=True)
    after = [(r.id, r.status, r.version) for r in memory.list_memories(namespace)]
    assert after == before and memory.decay(namespace) == preview
    assert (preview["cold"], preview["checked"]) == (2, 2)
