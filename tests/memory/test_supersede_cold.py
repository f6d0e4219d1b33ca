"""A change of mind or a restatement reaches memories that went cold from disuse."""

from __future__ import annotations

from hindsight_lg import EdgeType, HindsightMemory, Status
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import FrozenClock


def _gone_cold(
    memory: HindsightMemory, ns: str, clock: FrozenClock, text: str
) -> MemoryRecord:
    """Capture ``text``, then let months pass with weekly decay until it is cold."""
    [record] = memory.capture(text, namespace=ns, speaker="user")
    for _ in range(26):  # half a year of weekly decay, no recalls
        clock.advance(days=7)
        memory.decay(ns)
    now = memory.get(ns, record.id)
    assert now is not None
    assert Status.COLD == now.status  # cold, not archived: it is about the user
    return now


def _status(memory: HindsightMemory, ns: str, memory_id: str) -> Status:
    history = {r.id: r for r in memory.list_memories(ns, history=True)}
    return history[memory_id].status


def test_a_change_of_mind_supersedes_a_cold_memory_and_keeps_its_history(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """The cold "I live in Hangzhou" is superseded by the move, not left cold."""
    old = _gone_cold(memory, namespace, clock, "I live in Hangzhou")
    [new] = memory.capture(
        "I moved to Shenzhen last month", namespace=namespace, speaker="user"
    )
    history = {r.id: r for r in memory.list_memories(namespace, history=True)}
    assert (Status.SUPERSEDED, new.id) == (
        history[old.id].status,
        history[old.id].superseded_by,
    )
    assert "I live in Hangzhou" == history[old.id].content  # history stays
    supersedes = [
        (e.src, e.dst)
        for e in memory.edges(namespace, new.id)
        if e.type is EdgeType.SUPERSEDES
    ]
    assert [(new.id, old.id)] == supersedes
    recalled = memory.recall("Where do I live?", namespace=namespace).records
    assert old.id not in [r.id for r in recalled]


def test_a_switch_said_in_chinese_supersedes_a_cold_drink(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """ "我从绿茶换成了黑咖啡" supersedes the cold "我每天喝绿茶"."""
    old = _gone_cold(memory, namespace, clock, "我每天喝绿茶")
    [new] = memory.capture("我从绿茶换成了黑咖啡", namespace=namespace, speaker="user")
    assert Status.SUPERSEDED == _status(memory, namespace, old.id)
    assert [new.id] == [r.id for r in memory.list_memories(namespace)]


def test_restating_a_cold_memory_reinforces_and_wakes_it(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """Said again months later: the cold memory is active again, with no second copy."""
    old = _gone_cold(memory, namespace, clock, "I take the 7:40 train to work")
    [again] = memory.capture(
        "I still take the 7:40 train to work", namespace=namespace, speaker="user"
    )
    assert old.id == again.id
    [record] = memory.list_memories(namespace, history=True)
    assert (Status.ACTIVE, clock()) == (record.status, record.event_time)
    actions = [(a.op, a.detail.get("woken")) for a in memory.audit(namespace, old.id)]
    assert ("merge", True) in actions


def test_an_archived_memory_is_not_a_candidate(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """Archived memories are history: a change of mind leaves them archived."""
    [old] = memory.capture(
        "I take the bus to work", namespace=namespace, speaker="user"
    )
    old.status, old.version = Status.ARCHIVED, old.version + 1
    memory.backend.upsert(namespace, [old])  # as decay archives a weak, minor one
    [new] = memory.capture(
        "I take the subway to work now", namespace=namespace, speaker="user"
    )
    assert Status.ARCHIVED == _status(memory, namespace, old.id)
    assert Status.ACTIVE == _status(memory, namespace, new.id)
