"""One-step undo: a wrong supersede, a thread, or a span of time, rolled back."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.testing import FrozenClock


def states(memory: HindsightMemory, namespace: str) -> dict[str, str]:
    return {
        r.content: r.status.value
        for r in memory.list_memories(namespace, history=True, limit=100)
    }


def say(memory: HindsightMemory, namespace: str, text: str, thread: str = "t1") -> str:
    memory.clock.advance(days=1)  # type: ignore[attr-defined]
    (record,) = memory.capture(text, namespace=namespace, thread_id=thread)
    return record.id


def test_a_wrong_supersede_is_undone_in_one_step(
    memory: HindsightMemory, namespace: str
) -> None:
    """The superseded memory is current again, the wrong one archived, both audited."""
    paris = say(memory, namespace, "I live in Paris.")
    berlin = say(memory, namespace, "I moved to Berlin, I live in Berlin now.")
    assert "superseded" == states(memory, namespace)["I live in Paris."]
    done = memory.rollback(namespace, memory_id=berlin)
    assert ([berlin], [paris]) == (done.archived, done.restored)
    assert {
        "I live in Paris.": "active",
        "I moved to Berlin, I live in Berlin now.": "archived",
    } == states(memory, namespace)
    (old,) = [r for r in memory.list_memories(namespace) if r.id == paris]
    assert old.superseded_by is None
    assert old.importance > memory.policy.superseded_importance
    trail = memory.audit(namespace)[-2:]
    assert [("rollback", berlin), ("rollback", paris)] == [
        (e.op, e.memory_id) for e in trail
    ]
    assert {"memory_id": berlin, "to": "archived"} == trail[0].detail
    assert {"memory_id": berlin, "to": "active"} == trail[1].detail
    recalled = memory.recall("Where do I live?", namespace=namespace, timeout=None)
    assert ["I live in Paris."] == [m.record.content for m in recalled.memories]


def test_everything_one_thread_wrote_is_rolled_back(
    memory: HindsightMemory, namespace: str
) -> None:
    """A thread's memories are archived; other threads' stay as they were."""
    say(memory, namespace, "I live in Paris.", thread="good")
    say(memory, namespace, "My sister Mei works at a bakery.", thread="good")
    say(memory, namespace, "I moved to Berlin, I live in Berlin now.", thread="bad")
    say(memory, namespace, "I adopted a parrot called Kiwi.", thread="bad")
    done = memory.rollback(namespace, thread_id="bad")
    assert 2 == len(done.archived) and 1 == len(done.restored)
    assert {
        "I live in Paris.": "active",
        "My sister Mei works at a bakery.": "active",
        "I moved to Berlin, I live in Berlin now.": "archived",
        "I adopted a parrot called Kiwi.": "archived",
    } == states(memory, namespace)


def test_a_span_of_write_times_is_rolled_back(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """Memories written in [since, until) go; the ones before and after stay."""
    say(memory, namespace, "I live in Paris.")
    start = clock.now + 1
    say(memory, namespace, "I adopted a parrot called Kiwi.")
    end = clock.now + 1
    say(memory, namespace, "My sister Mei works at a bakery.")
    done = memory.rollback(namespace, since=start, until=end)
    assert 1 == len(done.archived)
    assert "archived" == states(memory, namespace)["I adopted a parrot called Kiwi."]
    assert 2 == len(memory.list_memories(namespace))


def test_what_something_newer_replaced_since_stays_history(
    memory: HindsightMemory, namespace: str
) -> None:
    """Undoing a middle statement does not bring back the first: the third is current."""
    paris = say(memory, namespace, "I live in Paris.")
    berlin = say(memory, namespace, "I moved to Berlin, I live in Berlin now.")
    say(memory, namespace, "I moved to Rome, I live in Rome now.")
    done = memory.rollback(namespace, memory_id=berlin)
    assert ([berlin], []) == (done.archived, done.restored)
    assert "superseded" == states(memory, namespace)["I live in Paris."]
    assert paris not in [r.id for r in memory.list_memories(namespace)]


def test_a_dry_run_changes_nothing(memory: HindsightMemory, namespace: str) -> None:
    """``dry_run`` says what would change and leaves every memory as it was."""
    say(memory, namespace, "I live in Paris.")
    berlin = say(memory, namespace, "I moved to Berlin, I live in Berlin now.")
    before = states(memory, namespace)
    done = memory.rollback(namespace, memory_id=berlin, dry_run=True)
    assert done.dry_run and [berlin] == done.archived and 1 == len(done.restored)
    assert before == states(memory, namespace)


def test_a_rolled_back_memory_can_be_restored(
    memory: HindsightMemory, namespace: str
) -> None:
    """Archived, not erased: ``restore`` brings it back."""
    kiwi = say(memory, namespace, "I adopted a parrot called Kiwi.")
    memory.rollback(namespace, memory_id=kiwi)
    memory.restore(namespace, kiwi)
    assert "active" == states(memory, namespace)["I adopted a parrot called Kiwi."]


@pytest.mark.parametrize(
    "selection",
    [{}, {"memory_id": "x", "thread_id": "t"}, {"since": 5.0, "until": 3.0}],
)
def test_a_bad_selection_is_refused_and_changes_nothing(
    memory: HindsightMemory, namespace: str, selection: dict[str, object]
) -> None:
    """Not exactly one selection, or an empty span: a ValueError that says why."""
    say(memory, namespace, "I live in Paris.")
    with pytest.raises(ValueError, match="roll back one thing|must be before"):
        memory.rollback(namespace, **selection)  # type: ignore[arg-type]
    assert {"I live in Paris.": "active"} == states(memory, namespace)


def test_an_unknown_memory_is_a_key_error(
    memory: HindsightMemory, namespace: str
) -> None:
    """A memory id the namespace does not hold is named in the error."""
    with pytest.raises(KeyError, match="nope"):
        memory.rollback(namespace, memory_id="nope")


async def test_the_async_twin_rolls_back(
    memory: HindsightMemory, namespace: str
) -> None:
    """``arollback`` does what ``rollback`` does."""
    kiwi = say(memory, namespace, "I adopted a parrot called Kiwi.")
    done = await memory.arollback(namespace, memory_id=kiwi)
    assert [kiwi] == done.archived


def test_an_agent_rolls_back_only_what_it_may_see(
    memory: HindsightMemory, namespace: str
) -> None:
    """Another agent's private memories in the same thread are left alone."""
    for agent, text in (("a", "I adopted a parrot."), ("b", "I bought a kayak.")):
        memory.capture(text, namespace=namespace, thread_id="shared", agent_id=agent)
    done = memory.rollback(namespace, thread_id="shared", agent_id="a")
    assert 1 == len(done.archived)
    assert {
        "I adopted a parrot.": "archived",
        "I bought a kayak.": "active",
    } == states(memory, namespace)
