"""Corrections by a person: supersede with history, bounded cascade, lesson review."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_lg import HindsightMemory, Kind, Status
from hindsight_lg.backends.base import Where
from hindsight_lg.memory.lifecycle import CorrectionFactors
from hindsight_lg.model import EdgeType, entity_id
from hindsight_lg.testing import HashingEmbedder, capture_spans


def _seed(memory: HindsightMemory, namespace: str) -> dict[str, str]:
    ids = {}
    for key, text, kind in [
        ("wrong", "Maya lives in Berlin and works at Lumen Labs", Kind.FACT),
        ("near", "Maya lives in Berlin and works at Lumen Labs as engineer", Kind.FACT),
        ("far", "The weekly grocery list has apples and oat milk", Kind.TASK),
    ]:
        ids[key] = memory.remember(text, namespace=namespace, kind=kind).id
    return ids


def test_correct_supersedes_and_keeps_history(
    memory: HindsightMemory, namespace: str
) -> None:
    """The correction is a new active memory; the old one is superseded, linked, kept."""
    ids = _seed(memory, namespace)
    fix = memory.correct(namespace, ids["wrong"], "Maya lives in Lisbon now")
    old = memory.get(namespace, ids["wrong"])
    assert old is not None and old.status is Status.SUPERSEDED
    assert old.superseded_by == fix.memory.id
    assert old.content == "Maya lives in Berlin and works at Lumen Labs"
    new = memory.get(namespace, fix.memory.id)
    assert new is not None and new.status is Status.ACTIVE
    assert new.content == "Maya lives in Lisbon now"
    assert new.source_kind.value == "user-confirmed"
    edges = memory.edges(namespace, fix.memory.id)
    assert any(
        e.type is EdgeType.SUPERSEDES and (e.src, e.dst) == (new.id, old.id)
        for e in edges
    )
    active = [r.id for r in memory.list_memories(namespace)]
    assert ids["wrong"] not in active and fix.memory.id in active
    history = [r.id for r in memory.list_memories(namespace, history=True)]
    assert ids["wrong"] in history


def test_correction_is_recalled_instead_of_the_old_text(
    memory: HindsightMemory, namespace: str
) -> None:
    """After a correction, recall returns the corrected text and not the old one."""
    ids = _seed(memory, namespace)
    fix = memory.correct(namespace, ids["wrong"], "Maya lives in Lisbon now")
    found = memory.recall("where does Maya live", namespace=namespace, timeout=None)
    assert fix.memory.id in found.ids
    assert ids["wrong"] not in found.ids


def test_correction_raises_importance(memory: HindsightMemory, namespace: str) -> None:
    """The corrected memory is more important than the memory it replaces was."""
    ids = _seed(memory, namespace)
    before = memory.get(namespace, ids["wrong"])
    assert before is not None
    fix = memory.correct(namespace, ids["wrong"], "Maya lives in Lisbon now")
    assert fix.memory.importance == pytest.approx(min(1.0, before.importance + 0.2))


def test_topic_memories_lose_a_bounded_amount(
    memory: HindsightMemory, namespace: str
) -> None:
    """Memories on the topic lose at most 10% of importance; unrelated ones keep it."""
    ids = _seed(memory, namespace)
    near, far = (memory.get(namespace, ids[k]) for k in ("near", "far"))
    assert near is not None and far is not None
    fix = memory.correct(namespace, ids["wrong"], "Maya lives in Lisbon now")
    near_after = memory.get(namespace, ids["near"])
    far_after = memory.get(namespace, ids["far"])
    assert near_after is not None and far_after is not None
    assert ids["near"] in fix.weakened
    assert near.importance * 0.9 <= near_after.importance < near.importance
    assert far_after.importance == far.importance
    trail = [a.op for a in memory.audit(namespace, ids["near"])]
    assert "correction-cascade" in trail


def test_cascade_respects_floor_and_limit(
    memory: HindsightMemory, namespace: str
) -> None:
    """The cascade never lowers importance below the floor nor touches past the limit."""
    text = "Maya lives in Berlin and works at Lumen Labs"
    wrong = memory.remember(text, namespace=namespace).id
    others = [
        memory.remember(f"{text} {i}", namespace=namespace, importance=0.051).id
        for i in range(4)
    ]
    factors = CorrectionFactors(topic_limit=2, topic_floor=0.05)
    fix = memory.correct(namespace, wrong, "Maya lives in Lisbon", factors=factors)
    assert len(fix.weakened) == 2
    for memory_id in others:
        record = memory.get(namespace, memory_id)
        assert record is not None and record.importance >= 0.05


def test_correct_keeps_a_concurrent_write(
    memory: HindsightMemory, namespace: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write landing between read and update is re-read and kept, not overwritten."""
    ids = _seed(memory, namespace)
    life = memory.lifecycle
    real_read = life.read
    raced: list[str] = []

    def read_then_race(ns: str, memory_id: str) -> Any:
        record = real_read(ns, memory_id)
        if memory_id == ids["wrong"] and len(raced) < 2:
            raced.append(memory_id)
            if len(raced) == 2:  # the supersede step's read: an agent writes now
                memory.reinforce(ns, [memory_id])
        return record

    monkeypatch.setattr(life, "read", read_then_race)
    memory.correct(namespace, ids["wrong"], "Maya lives in Lisbon now")
    old = memory.get(namespace, ids["wrong"])
    assert old is not None
    assert old.status is Status.SUPERSEDED
    assert old.access_count == 1  # the agent's reinforcement survived


def test_correct_refuses_superseded_and_empty(
    memory: HindsightMemory, namespace: str
) -> None:
    """A superseded memory points to its successor; empty text is refused."""
    ids = _seed(memory, namespace)
    with pytest.raises(ValueError, match="empty"):
        memory.correct(namespace, ids["wrong"], "  ")
    fix = memory.correct(namespace, ids["wrong"], "Maya lives in Lisbon now")
    with pytest.raises(ValueError, match=fix.memory.id):
        memory.correct(namespace, ids["wrong"], "again")


def test_correct_is_traced_and_audited(memory: HindsightMemory, namespace: str) -> None:
    """A correction leaves a span and audit entries on the new and the old memory."""
    ids = _seed(memory, namespace)
    with capture_spans() as spans:
        fix = memory.correct(namespace, ids["wrong"], "Maya lives in Lisbon now")
    assert "hindsight.correct" in [s.name for s in spans]
    assert "correct" in [a.op for a in memory.audit(namespace, fix.memory.id)]
    assert "corrected" in [a.op for a in memory.audit(namespace, ids["wrong"])]


def _lesson(memory: HindsightMemory, namespace: str) -> str:
    return memory.remember(
        "For requests about trips, check the calendar first",
        namespace=namespace,
        kind=Kind.EXPERIENCE,
        confidence=0.6,
        meta={"verified": False, "origin": "reflection"},
    ).id


def test_confirmed_lesson_joins_recall(memory: HindsightMemory, namespace: str) -> None:
    """An unverified lesson is not recalled; once confirmed it is."""
    lesson = _lesson(memory, namespace)
    query = "trips calendar check"
    assert lesson not in memory.recall(query, namespace=namespace, timeout=None).ids
    with capture_spans() as spans:
        confirmed = memory.confirm_lesson(namespace, lesson)
    assert confirmed.meta["verified"] is True
    assert lesson in memory.recall(query, namespace=namespace, timeout=None).ids
    assert "hindsight.confirm_lesson" in [s.name for s in spans]
    assert "confirm" in [a.op for a in memory.audit(namespace, lesson)]


def test_rejected_lesson_is_archived(memory: HindsightMemory, namespace: str) -> None:
    """A rejected lesson is archived, marked rejected and never recalled."""
    lesson = _lesson(memory, namespace)
    rejected = memory.reject_lesson(namespace, lesson)
    assert rejected.status is Status.ARCHIVED and rejected.meta["rejected"] is True
    found = memory.recall(
        "trips calendar", namespace=namespace, include_experience=True, timeout=None
    )
    assert lesson not in found.ids
    assert "reject" in [a.op for a in memory.audit(namespace, lesson)]


def test_only_lessons_are_reviewed(memory: HindsightMemory, namespace: str) -> None:
    """Confirming a memory that is not an experience lesson is a caller mistake."""
    fact = memory.remember("Maya likes tea", namespace=namespace).id
    with pytest.raises(ValueError, match="not an experience"):
        memory.confirm_lesson(namespace, fact)


async def test_async_twins(memory: HindsightMemory, namespace: str) -> None:
    """The async twins correct and review like the sync methods."""
    ids = _seed(memory, namespace)
    fix = await memory.acorrect(namespace, ids["wrong"], "Maya lives in Lisbon")
    assert fix.superseded.status is Status.SUPERSEDED
    lesson = _lesson(memory, namespace)
    assert (await memory.aconfirm_lesson(namespace, lesson)).meta["verified"] is True
    assert (await memory.areject_lesson(namespace, lesson)).status is Status.ARCHIVED


def test_cascade_spares_other_agents_private_memories(
    memory: HindsightMemory, namespace: str
) -> None:
    """Correcting one agent's memory leaves another agent's private ones alone."""
    text = "Maya lives in Berlin and works at Lumen Labs"
    wrong = memory.remember(text, namespace=namespace, agent_id="a").id
    mine = memory.remember(f"{text} today", namespace=namespace, agent_id="a")
    theirs = memory.remember(f"{text} now", namespace=namespace, agent_id="b")
    fix = memory.correct(namespace, wrong, "Maya lives in Lisbon")
    assert mine.id in fix.weakened and theirs.id not in fix.weakened
    kept = memory.get(namespace, theirs.id)
    assert kept is not None and kept.importance == theirs.importance


def test_a_correction_is_read_from_its_own_words(
    memory: HindsightMemory, namespace: str, hashing: HashingEmbedder
) -> None:
    """Entities, slot, summary, vector and lexical matches come from the new text."""
    [old] = memory.capture("I live in Berlin.", namespace=namespace, speaker="user")
    fix = memory.correct(namespace, old.id, "I live in Munich.")
    new = memory.get(namespace, fix.memory.id)
    assert new is not None
    assert (["Munich"], "user/residence") == (new.entities, new.meta.get("slot"))
    assert "I live in Munich." == new.summary
    [stored] = memory.backend.get(namespace, [new.id], vectors=True)
    assert hashing.embed(["I live in Munich."])[0] == pytest.approx(stored.dense)
    mentions = memory.edges(namespace, new.id)
    assert {entity_id("Munich")} == {
        e.dst for e in mentions if e.type is EdgeType.MENTIONS
    }
    found = {
        word: [
            h.record.id
            for h in memory.backend.search_lexical(namespace, [word], Where(), limit=5)
        ]
        for word in ("berlin", "munich")
    }
    assert {"berlin": [], "munich": [new.id]} == found


def test_an_update_of_the_words_is_read_from_the_new_words(
    memory: HindsightMemory, namespace: str
) -> None:
    """``update(content=...)`` re-reads entities and slot, keeping other meta."""
    [old] = memory.capture("I live in Berlin.", namespace=namespace, speaker="user")
    memory.update(namespace, old.id, content="I live in Munich.", meta={"origin": "t"})
    new = memory.get(namespace, old.id)
    assert new is not None
    assert ["Munich"] == new.entities
    assert {"origin": "t", "slot": "user/residence"} == new.meta
    found = [
        h.record.id
        for h in memory.backend.search_lexical(namespace, ["berlin"], Where(), limit=5)
    ]
    assert [] == found
