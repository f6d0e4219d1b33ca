"""A memory is named by its id or by the unique prefix a listing printed."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory, Kind, Status
from hindsight_lg.model import MemoryRecord


def _told(memory: HindsightMemory, namespace: str, text: str) -> MemoryRecord:
    return memory.remember(text, namespace=namespace, kind=Kind.FACT)


def _with_id(memory: HindsightMemory, namespace: str, memory_id: str) -> None:
    record = MemoryRecord(namespace, f"note {memory_id}", id=memory_id)
    memory.put_record(record)


def test_the_listed_short_id_names_the_memory_everywhere(
    memory: HindsightMemory, namespace: str
) -> None:
    """Correct, restore, roll back, forget and lesson reviews take the 8 characters."""
    wrong = _told(memory, namespace, "Maya lives in Berlin")
    fix = memory.correct(namespace, wrong.id[:8], "Maya lives in Munich")
    assert fix.superseded.id == wrong.id
    undone = memory.rollback(namespace, memory_id=fix.memory.id[:8])
    assert (fix.memory.id, [fix.memory.id]) == (
        undone.selection.memory_id,
        undone.archived,
    )
    assert Status.ACTIVE is memory.restore(namespace, fix.memory.id[:8]).status
    lesson = memory.remember(
        "For trips, check the calendar first",
        namespace=namespace,
        kind=Kind.EXPERIENCE,
        meta={"verified": False},
    )
    assert memory.confirm_lesson(namespace, lesson.id[:8]).meta["verified"] is True
    assert memory.reject_lesson(namespace, lesson.id[:8]).status is Status.ARCHIVED
    assert 1 == memory.forget(namespace, [wrong.id[:8]])
    assert memory.get(namespace, wrong.id) is None


def test_an_ambiguous_prefix_says_to_give_more(
    memory: HindsightMemory, namespace: str
) -> None:
    """A prefix of two ids is refused, with the fix in the message; nothing changes."""
    _with_id(memory, namespace, "abcd1111" + "0" * 24)
    _with_id(memory, namespace, "abcd2222" + "0" * 24)
    for call in (
        lambda: memory.correct(namespace, "abcd", "new text"),
        lambda: memory.restore(namespace, "abcd"),
        lambda: memory.forget(namespace, ["abcd"]),
    ):
        with pytest.raises(ValueError, match="give more characters of the id"):
            call()
    assert 2 == len(memory.list_memories(namespace))
    assert memory.correct(namespace, "abcd2", "new text").superseded.id.startswith(
        "abcd2"
    )


def test_an_unknown_id_says_what_to_give(
    memory: HindsightMemory, namespace: str
) -> None:
    """An id nothing starts with is a ValueError (and the KeyError it always was)."""
    _told(memory, namespace, "Maya lives in Berlin")
    with pytest.raises(ValueError, match="give the id as listed") as raised:
        memory.correct(namespace, "ffffffff", "new text")
    assert isinstance(raised.value, KeyError)
    with pytest.raises(KeyError, match="give the id as listed"):
        memory.restore(namespace, "ffffffff")


def test_forgetting_an_id_already_gone_is_no_error(
    memory: HindsightMemory, namespace: str
) -> None:
    """A retried erasure of a forgotten id (whole or prefix) deletes nothing, quietly."""
    told = _told(memory, namespace, "Maya lives in Berlin")
    assert 1 == memory.forget(namespace, [told.id])
    assert 0 == memory.forget(namespace, [told.id, told.id[:8]])


def test_a_prefix_under_four_characters_is_never_expanded(
    memory: HindsightMemory, namespace: str
) -> None:
    """Three characters match by chance: they name no memory, even a unique one."""
    told = _told(memory, namespace, "Maya lives in Berlin")
    with pytest.raises(KeyError):
        memory.correct(namespace, told.id[:3], "new text")
    assert 0 == memory.forget(namespace, [told.id[:3]])


def test_a_prefix_never_names_a_memory_hidden_from_the_agent(
    memory: HindsightMemory, namespace: str
) -> None:
    """Another agent's private memory is unknown to a prefix, as to its whole id."""
    private = memory.remember("Maya's PIN is 1234", namespace=namespace, agent_id="a")
    with pytest.raises(KeyError):
        memory.rollback(namespace, memory_id=private.id[:8], agent_id="b")
    done = memory.rollback(namespace, memory_id=private.id[:8], agent_id="a")
    assert [private.id] == done.archived
