"""Read-time order of a change of mind: the later statement first, the earlier marked."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.policy import Policy
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

NS = "u"


def told(*said: tuple[str, str], policy: Policy | None = None) -> HindsightMemory:
    """A memory told ``(speaker, text)`` statements, a month apart, none linked."""
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=FrozenClock(), policy=policy
    )
    for speaker, text in said:
        memory.capture(text, namespace=NS, speaker=speaker)
        memory.clock.advance(days=30)  # type: ignore[attr-defined]
    return memory


def order(memory: HindsightMemory, question: str) -> list[tuple[str, bool]]:
    result = memory.recall(question, namespace=NS, timeout=None)
    return [(m.record.content, bool(m.earlier)) for m in result.memories]


NOTION = "I keep all my notes in Notion."
OBSIDIAN = "My notes are all in Obsidian now."


def test_the_later_statement_comes_first_and_the_earlier_is_marked() -> None:
    """Two active statements on one subject: newest first, the older one "(earlier)"."""
    memory = told(("user", NOTION), ("user", OBSIDIAN))
    assert all(r.status == "active" for r in memory.list_memories(NS))  # not linked
    assert [(OBSIDIAN, False), (NOTION, True)] == order(memory, "notes app Notion?")
    prompt = memory.recall("notes app Notion?", namespace=NS, timeout=None).to_prompt()
    assert prompt.index("Obsidian") < prompt.index("(earlier) I keep all my notes")


def test_a_later_statement_in_other_words_rides_on_the_earlier() -> None:
    """With joins on, a later statement cut as unrelated joins via the earlier.

    (Joins are off by default; the hashing embedder scores the later one far
    below the earlier one, so the share it must reach is lowered here.)
    """
    policy = Policy(newest_first_share=0.1, newest_first_joins=True)
    memory = told(("user", NOTION), ("user", OBSIDIAN), policy=policy)
    alone = Policy(
        newest_first_share=0.1, newest_first_joins=True, newest_first_window=0
    )
    before = told(("user", NOTION), ("user", OBSIDIAN), policy=alone)
    assert [(NOTION, False)] == order(before, "Notion?")
    result = memory.recall("Notion?", namespace=NS, timeout=None, explain=True)
    assert [OBSIDIAN, NOTION] == [m.record.content for m in result.memories]
    assert result.memories[1].earlier == result.memories[0].id
    no_joins = Policy(newest_first_share=0.1)
    kept = told(("user", NOTION), ("user", OBSIDIAN), policy=no_joins)
    assert [(NOTION, False)] == order(kept, "Notion?")


def test_another_speakers_later_statement_stays_where_it_ranks() -> None:
    """Tom's later notes app says nothing of Maya's."""
    memory = told(("Maya", NOTION), ("Tom", OBSIDIAN))
    assert not any(earlier for _, earlier in order(memory, "notes app Notion?"))


@pytest.mark.parametrize(
    "later",
    ["Maybe my notes should all go in Obsidian?", "If my notes were in Obsidian..."],
)
def test_a_question_or_supposition_does_not_move_up(later: str) -> None:
    """What is only weighed or asked is not the current statement."""
    memory = told(("user", NOTION), ("user", later))
    assert (NOTION, False) == order(memory, "notes app Notion?")[0]


def test_statements_on_other_subjects_are_not_reordered() -> None:
    """A later statement about something else keeps its rank, nothing is marked."""
    memory = told(("user", NOTION), ("user", "We adopted a grey kitten called Mochi."))
    assert [(NOTION, False)] == order(memory, "notes app Notion?")[:1]
    assert not any(e for _, e in order(memory, "Notion notes kitten?"))


def test_a_window_of_zero_keeps_the_ranking() -> None:
    """``Policy(newest_first_window=0)`` turns the read-time order off."""
    memory = told(
        ("user", NOTION), ("user", OBSIDIAN), policy=Policy(newest_first_window=0)
    )
    assert (NOTION, False) == order(memory, "Notion?")[0]


def test_the_person_a_statement_is_about_may_correct_it() -> None:
    """Tom said where Maya keeps her notes; Maya's own later word comes first."""
    memory = told(
        ("Tom", "Maya keeps all her notes in Notion."),
        ("Maya", "My notes are all in Obsidian now."),
    )
    got = order(memory, "Does Maya keep notes in Notion?")
    assert [("My notes are all in Obsidian now.", False)] == got[:1]
    assert ("Maya keeps all her notes in Notion.", True) in got


def test_a_later_line_is_moved_only_beside_its_nearest_neighbours() -> None:
    """Above the floor is not enough where the speaker said closer things before."""
    said = [
        ("user", NOTION),
        ("user", "I keep all my work notes in Notion too."),
        ("user", "All my notes for school are in Notion."),
        ("user", "My notes app is all right."),
    ]
    question, vague = "notes in Notion?", "My notes app is all right."
    floor_only = told(*said, policy=Policy(newest_first_neighbours=len(said)))
    assert (vague, False) == order(floor_only, question)[0]
    assert vague not in [text for text, _ in order(told(*said), question)[:2]]
