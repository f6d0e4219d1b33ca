"""Changes of mind through capture: superseded with history, current first, on every backend."""

from __future__ import annotations

from pathlib import Path

from hindsight_lg import EdgeType, HindsightMemory, Status
from hindsight_lg.bench.changes import (
    SUPERSEDE,
    capture_outcomes,
    coarse,
    judge_outcomes,
    load_pairs,
    score,
)
from hindsight_lg.memory.language.judge import judge_texts
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

CORPUS = Path(__file__).parent / "data" / "changes_of_mind.jsonl"


def _change(memory: HindsightMemory, ns: str, clock: FrozenClock, old: str, new: str):  # type: ignore[no-untyped-def]
    [before] = memory.capture(old, namespace=ns, speaker="user")
    clock.advance(days=10)
    [after] = memory.capture(new, namespace=ns, speaker="user")
    return before, after


def test_a_commute_change_in_other_words_supersedes_and_ranks_first(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "These days I cycle..." replaces "I take the 7:40 train"; recall answers with it."""
    old, new = _change(
        memory,
        namespace,
        clock,
        "I take the 7:40 train",
        "These days I cycle to the office instead of taking the train",
    )
    history = {r.id: r for r in memory.list_memories(namespace, history=True)}
    assert (Status.SUPERSEDED, new.id) == (
        history[old.id].status,
        history[old.id].superseded_by,
    )
    edges = [
        (e.src, e.dst)
        for e in memory.edges(namespace, new.id)
        if e.type is EdgeType.SUPERSEDES
    ]
    assert [(new.id, old.id)] == edges
    recalled = [
        r.id
        for r in memory.recall(
            "how do I get to the office?", namespace=namespace
        ).records
    ]
    assert old.id not in recalled
    assert [new.id] == recalled[:1]


def test_a_switch_from_one_drink_to_another_supersedes_and_ranks_first(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "switched from green tea to black coffee" replaces the tea; recall answers coffee."""
    old, new = _change(
        memory,
        namespace,
        clock,
        "I drink green tea every morning",
        "I've switched from green tea to black coffee in the mornings",
    )
    assert [new.id] == [r.id for r in memory.list_memories(namespace)]
    history = {r.id: r for r in memory.list_memories(namespace, history=True)}
    assert (Status.SUPERSEDED, new.id) == (
        history[old.id].status,
        history[old.id].superseded_by,
    )
    recalled = memory.recall("What do I drink in the mornings?", namespace=namespace)
    assert [new.id] == [r.id for r in recalled.records]


def test_a_move_said_in_chinese_replaces_where_the_user_lives(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "我上个月搬到深圳了" supersedes "我住在杭州"; the old text stays in history."""
    old, new = _change(memory, namespace, clock, "我住在杭州", "我上个月搬到深圳了")
    assert [new.id] == [r.id for r in memory.list_memories(namespace)]
    assert "我住在杭州" in [
        r.content for r in memory.list_memories(namespace, history=True)
    ]
    decisions = [a.detail.get("decision") for a in memory.audit(namespace, new.id)]
    assert "replace" in decisions


def test_additions_suppositions_and_denials_leave_the_old_memory_current(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """Also-statements, "if I moved" and "I don't live in Paris" supersede nothing."""
    [tea] = memory.capture("I drink green tea every morning", namespace=namespace)
    [home] = memory.capture("I live in Hangzhou", namespace=namespace)
    clock.advance(days=3)
    for text in (
        "I also enjoy a good espresso now and then",
        "If I moved to Paris I'd have to learn French",
        "I don't live in Paris",
    ):
        memory.capture(text, namespace=namespace)
    active = {r.id for r in memory.list_memories(namespace)}
    assert {tea.id, home.id} <= active


def test_a_restatement_reinforces_the_memory_it_restates(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "I'm still working at Google" merges into "I work at Google" and raises it."""
    old, again = _change(
        memory, namespace, clock, "I work at Google", "I'm still working at Google"
    )
    assert old.id == again.id
    assert again.importance > old.importance
    assert 1 == len(memory.list_memories(namespace, history=True))


def test_an_older_statement_arriving_late_does_not_replace_the_newer(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """A replayed turn with its original time is stored already superseded."""
    [new] = memory.capture("I moved to Denver last spring", namespace=namespace)
    [old] = memory.capture(
        "I live in Boston", namespace=namespace, event_time=clock.now - 86400 * 300
    )
    assert [new.id] == [r.id for r in memory.list_memories(namespace)]
    assert (Status.SUPERSEDED, new.id) == (old.status, old.superseded_by)


def test_the_corpus_has_both_languages_every_category_and_two_halves() -> None:
    """At least 150 labelled pairs, English and Chinese, tuning and held-out halves."""
    pairs = load_pairs(CORPUS)
    assert len(pairs) >= 150
    assert {"en", "zh"} == {p.lang for p in pairs}
    assert {"tune", "held"} == {p.split for p in pairs}
    categories = {
        "update",
        "correction",
        "addition",
        "unrelated",
        "negated",
        "hypothetical",
        "restatement",
    }
    assert categories == {p.category for p in pairs}


def test_held_out_decisions_stay_above_the_measured_floor() -> None:
    """On the half never tuned on: supersede precision >= 0.95, recall >= 0.78 (measured 1.00 / 0.81)."""
    pairs = load_pairs(CORPUS, "held")
    gold = [coarse(p.label) for p in pairs]
    got = [coarse(d) for d in judge_outcomes(pairs, judge_texts)]
    s = score(gold, got, SUPERSEDE)
    assert (s.precision >= 0.95, s.recall >= 0.78) == (True, True), s
    exact = sum(
        p.label == d
        for p, d in zip(pairs, judge_outcomes(pairs, judge_texts), strict=True)
    )
    assert exact / len(pairs) >= 0.88


def test_held_out_captures_supersede_with_the_measured_precision() -> None:
    """End to end on the held-out half: supersede precision >= 0.95, recall >= 0.78 (measured 1.00 / 0.81)."""
    pairs = load_pairs(CORPUS, "held")
    embedder = HashingEmbedder()
    got = capture_outcomes(
        pairs, lambda: HindsightMemory(InMemoryBackend(), embedder, clock=FrozenClock())
    )
    s = score([coarse(p.label) for p in pairs], got, SUPERSEDE)
    assert (s.precision >= 0.95, s.recall >= 0.78) == (True, True), s


def test_a_change_of_mind_in_one_clause_of_two_supersedes(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """The second clause reads as a move; the first still changes the view of Redis."""
    old, new = _change(
        memory,
        namespace,
        clock,
        "I don't like Redis for caching, it bit us in production last year.",
        "Actually Redis is fine for caching now, we moved to a managed cluster.",
    )
    history = {r.id: r for r in memory.list_memories(namespace, history=True)}
    assert (history[old.id].status, history[old.id].superseded_by) == (
        Status.SUPERSEDED,
        new.id,
    )


def test_a_change_of_view_on_one_thing_leaves_other_likes_alone(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "Redis is fine now" changes the view of Redis, not that of hiking."""
    hiking, _ = _change(
        memory,
        namespace,
        clock,
        "I love hiking in the Harz mountains on weekends.",
        "Actually Redis is fine for caching now, we moved to a managed cluster.",
    )
    current = {r.id for r in memory.list_memories(namespace)}
    assert hiking.id in current


def test_giving_up_what_a_preference_named_supersedes_it_across_kinds(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "I don't eat meat any more" (an event) retires "meat is my favourite food"."""
    old, new = _change(
        memory,
        namespace,
        clock,
        "I love eating steak, meat is my favourite food.",
        "I don't eat meat any more.",
    )
    assert old.kind != new.kind
    history = {r.id: r for r in memory.list_memories(namespace, history=True)}
    assert (Status.SUPERSEDED, new.id) == (
        history[old.id].status,
        history[old.id].superseded_by,
    )


def test_moving_to_something_that_is_no_place_sets_no_residence(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """A move of the user's home leaves "we moved to a managed cluster" current."""
    old, _ = _change(
        memory,
        namespace,
        clock,
        "Actually Redis is fine for caching now, we moved to a managed cluster.",
        "I moved from Berlin to Munich.",
    )
    history = {r.id: r for r in memory.list_memories(namespace, history=True)}
    assert Status.ACTIVE == history[old.id].status
