"""Whose statement changes whose: speakers, reported speech and replays."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.language.speech import reported
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

NS = "group"


@pytest.fixture
def memory() -> HindsightMemory:
    return HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=FrozenClock())


def say(
    memory: HindsightMemory, text: str, speaker: str, *ids: str
) -> list[MemoryRecord]:
    memory.clock.advance(days=3)  # type: ignore[attr-defined]
    return memory.capture(text, namespace=NS, speaker=speaker, source_ids=list(ids))


def statuses(memory: HindsightMemory) -> dict[str, str]:
    return {
        f"{r.participants[0]}: {r.content}": r.status.value
        for r in memory.list_memories(NS, history=True)
    }


def test_one_speaker_never_supersedes_another(memory: HindsightMemory) -> None:
    """Tom's move says nothing of where Maya lives."""
    say(memory, "I live in Paris.", "Maya")
    say(memory, "I moved to Berlin, I live in Berlin now.", "Tom")
    assert {
        "Maya: I live in Paris.": "active",
        "Tom: I moved to Berlin, I live in Berlin now.": "active",
    } == statuses(memory)


def test_the_same_words_from_two_speakers_stay_two_memories(
    memory: HindsightMemory,
) -> None:
    """Two people who both live in Oslo are two facts, not one merged memory."""
    say(memory, "I live in Oslo.", "Maya")
    say(memory, "I live in Oslo.", "Tom")
    assert 2 == len(memory.list_memories(NS))


def test_a_speaker_corrects_what_another_said_about_them(
    memory: HindsightMemory,
) -> None:
    """Tom said where Maya lives; Maya's own word on it wins."""
    say(memory, "Maya lives in Leeds.", "Tom")
    say(memory, "I live in York, not Leeds.", "Maya")
    assert {
        "Tom: Maya lives in Leeds.": "superseded",
        "Maya: I live in York, not Leeds.": "active",
    } == statuses(memory)


def test_a_speaker_still_changes_their_own_mind(memory: HindsightMemory) -> None:
    """The speaker rule leaves a person's own change of mind alone."""
    say(memory, "I live in Paris.", "Maya")
    say(memory, "I moved to Berlin, I live in Berlin now.", "Maya")
    assert "superseded" == statuses(memory)["Maya: I live in Paris."]


@pytest.mark.parametrize(
    "later",
    [
        'Bob told me "I live in Berlin now".',
        "My sister texted 'I'm moving to Berlin next month'.",
        "听小王说他搬到柏林了。",
    ],
)
def test_quoted_and_reported_speech_change_nothing(
    memory: HindsightMemory, later: str
) -> None:
    """Someone else's words, quoted or reported, are not the speaker's change of mind."""
    say(memory, "I live in Paris.", "user")
    say(memory, later, "user")
    assert "active" == statuses(memory)["user: I live in Paris."]


def test_reported_tells_reports_from_own_words() -> None:
    """The speaker's own "I said" and Chinese "我跟你说" are not reports."""
    assert reported('Bob told me "I live in Berlin"')
    assert reported("据说他换工作了")
    assert not reported("As I said, I live in Berlin.")
    assert not reported("我跟你说，我搬到深圳了")


def test_a_replay_changes_nothing_and_is_audited(memory: HindsightMemory) -> None:
    """The old statement sent again with its source id does not undo the change."""
    say(memory, "I live in Paris.", "user", "m1")
    (berlin,) = say(memory, "I live in Berlin.", "user", "m2")
    (again,) = say(memory, "I live in Paris.", "user", "m1")
    current = [r.content for r in memory.list_memories(NS)]
    assert ["I live in Berlin."] == current
    assert again.status.value == "superseded"
    assert "replay" == memory.audit(NS, again.id)[-1].op


def test_the_same_words_from_a_new_message_are_said_again(
    memory: HindsightMemory,
) -> None:
    """Without the original's source id the statement is new: the last said wins."""
    say(memory, "I live in Paris.", "user", "m1")
    say(memory, "I live in Berlin.", "user", "m2")
    say(memory, "I live in Paris.", "user", "m3")
    assert ["I live in Paris."] == [r.content for r in memory.list_memories(NS)]
