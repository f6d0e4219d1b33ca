"""The issue's acceptance examples through the public API, on every backend."""

from __future__ import annotations

import pytest

from hindsight_lg import EdgeType, HindsightMemory, Kind, Status
from hindsight_lg.memory.recall.lines import spoken_date
from hindsight_lg.testing import FrozenClock

TRIP = "帮我查一下上海明天的天气，另外我下周三要去上海出差，记得提醒我带伞"
DISLIKE = "I don't like Redis for caching"
UPDATE = "Actually Redis is fine for caching now"


def check_trip(memory: HindsightMemory, namespace: str) -> None:
    """The Chinese turn: a one-day query and a thirty-day task joined by ``causes``."""
    written = memory.capture(TRIP, namespace=namespace, speaker="user")
    by_kind = {r.kind: r for r in written}
    assert [Kind.QUERY, Kind.TASK] == [r.kind for r in written]
    query, task = by_kind[Kind.QUERY], by_kind[Kind.TASK]
    assert (1.0, 30.0) == (query.half_life_days, task.half_life_days)
    assert query.importance < task.importance
    causes = [e for e in memory.edges(namespace, task.id) if e.type is EdgeType.CAUSES]
    assert [(task.id, query.id)] == [(e.src, e.dst) for e in causes]


def check_redis(memory: HindsightMemory, namespace: str, clock: FrozenClock) -> None:
    """The changed opinion: the old one superseded, both listed with history."""
    [old] = memory.capture(DISLIKE, namespace=namespace, thread_id="t1")
    clock.advance(days=30)
    [new] = memory.capture(UPDATE, namespace=namespace, thread_id="t2")
    assert [new.id] == [r.id for r in memory.list_memories(namespace)]
    history = {r.id: r for r in memory.list_memories(namespace, history=True)}
    assert {old.id, new.id} == set(history)
    stale = history[old.id]
    assert (Status.SUPERSEDED, new.id) == (stale.status, stale.superseded_by)
    assert memory.policy.superseded_importance == stale.importance
    supersedes = [
        (e.src, e.dst)
        for e in memory.edges(namespace, new.id)
        if e.type is EdgeType.SUPERSEDES
    ]
    assert [(new.id, old.id)] == supersedes
    assert "supersede" in [a.op for a in memory.audit(namespace, new.id)]


def test_chinese_turn_gives_query_and_task_joined_by_causes(
    memory: HindsightMemory, namespace: str
) -> None:
    """A weather question and a trip plan become a query and a task with a causal edge."""
    check_trip(memory, namespace)


def test_changed_opinion_supersedes_the_old_one(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "Actually Redis is fine" supersedes "I don't like Redis", kept as history."""
    check_redis(memory, namespace, clock)


def test_recall_does_not_return_the_superseded_opinion(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """After an update, recall returns the current opinion and not the old one."""
    [old] = memory.capture(DISLIKE, namespace=namespace)
    clock.advance(days=1)
    [new] = memory.capture(UPDATE, namespace=namespace)
    result = memory.recall("Redis caching", namespace=namespace, timeout=None)
    assert new.id in result.ids
    assert old.id not in result.ids


def test_near_duplicate_merges_and_keeps_both_sources(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """Saying the same thing twice refreshes one memory that keeps both sources."""
    [first] = memory.capture(
        "I prefer green tea over coffee", namespace=namespace, source_ids=["s1:0"]
    )
    clock.advance(days=2)
    [again] = memory.capture(
        "I prefer green tea over coffee!", namespace=namespace, source_ids=["s2:4"]
    )
    assert first.id == again.id
    [stored] = memory.list_memories(namespace, history=True)
    assert ["s1:0", "s2:4"] == stored.source_ids
    assert stored.importance > first.importance
    assert clock.now == stored.event_time
    assert ["create", "merge"] == [a.op for a in memory.audit(namespace, first.id)]


def test_recall_reports_paths_and_annotates_the_prompt(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """Recall results carry per-path scores; the prompt shows kind, time, confidence."""
    [tea] = memory.capture("I prefer green tea over coffee", namespace=namespace)
    memory.capture("My sister Lena lives in Lisbon", namespace=namespace)
    result = memory.recall("green tea", namespace=namespace, timeout=None)
    top = result.memories[0]
    assert tea.id == top.id
    assert {"dense", "lexical"} <= set(top.paths)
    assert all(0.0 <= v <= 1.0 for v in top.paths.values())
    day = spoken_date(clock.now)
    prompt = result.to_prompt()
    # The day heads its lines once; the line itself keeps kind and confidence.
    assert f"\n{day}:\n- [preference · conf 1.0" in prompt
    assert f"[preference · {day} · conf 1.0" in top.line
    assert "the current conversation wins" in prompt
    assert prompt.rstrip().endswith("</memories>")


def test_low_salience_turn_is_audited_not_promoted(
    memory: HindsightMemory, namespace: str
) -> None:
    """Filler ("ok thanks!") is not a memory, but the audit trail observes it."""
    assert [] == memory.capture("ok thanks!", namespace=namespace, source_ids=["s1:3"])
    assert [] == memory.list_memories(namespace, history=True)
    [entry] = memory.audit(namespace)
    assert ("observe", "ok thanks!") == (entry.op, entry.detail["content"])
    assert ["s1:3"] == entry.detail["source_ids"]


def test_source_ids_and_thread_are_kept_on_the_record(
    memory: HindsightMemory, namespace: str
) -> None:
    """Benchmarks map memories back to dialogue turns through source_ids."""
    [r] = memory.capture(
        "My sister Lena lives in Lisbon",
        namespace=namespace,
        thread_id="session-3",
        source_ids=["D3:7"],
    )
    stored = memory.get(namespace, r.id)
    assert stored is not None
    assert (["D3:7"], "session-3") == (stored.source_ids, stored.thread_id)


def test_turns_of_one_thread_are_linked_in_order(
    memory: HindsightMemory, namespace: str
) -> None:
    """Consecutive memories of a thread get a ``precedes`` edge."""
    [a] = memory.capture("I moved to Berlin in May", namespace=namespace, thread_id="t")
    [b] = memory.capture(
        "I work at Lumen Labs as an engineer", namespace=namespace, thread_id="t"
    )
    precedes = [
        (e.src, e.dst)
        for e in memory.edges(namespace, b.id)
        if e.type is EdgeType.PRECEDES
    ]
    assert [(a.id, b.id)] == precedes


async def test_async_twins_capture_and_recall(
    memory: HindsightMemory, namespace: str
) -> None:
    """acapture and arecall do what their sync twins do."""
    [r] = await memory.acapture("I love hiking in the Harz", namespace=namespace)
    result = await memory.arecall("hiking", namespace=namespace, timeout=None)
    assert [r.id] == result.ids


@pytest.mark.slow
def test_acceptance_examples_with_minilm_on_milvus_lite(
    minilm_memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """Both acceptance examples hold with real MiniLM embeddings on Milvus Lite."""
    check_trip(minilm_memory, namespace)
    check_redis(minilm_memory, namespace + "-redis", clock)


@pytest.mark.slow
def test_minilm_recall_finds_a_paraphrase(
    minilm_memory: HindsightMemory, namespace: str
) -> None:
    """With a real model, recall finds a memory phrased differently from the query."""
    [tea] = minilm_memory.capture("I prefer green tea over coffee", namespace=namespace)
    minilm_memory.capture("My sister Lena lives in Lisbon", namespace=namespace)
    result = minilm_memory.recall(
        "what hot drink does the user like?", namespace=namespace, timeout=None
    )
    assert tea.id == result.ids[0]
