"""Right to be forgotten, verified: records, edges, audit content and spooled captures.

:meth:`HindsightMemory.forget` deletes records, their edges and the audit trail;
:func:`forget_namespace` also clears captures still waiting in the spool and
then counts what is left, so ``hindsight-lg forget --verify`` can show zeros.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hindsight_lg.backends.base import MemoryBackend, Where, check_namespace
from hindsight_lg.memory.transfer.portability import all_records, edges_of
from hindsight_lg.model import CONTEXT_KEY, MemoryRecord

_ALL_STATUSES = ("active", "cold", "superseded", "archived")


@dataclass(slots=True)
class ForgetReport:
    """What ``forget`` removed and, after ``verify``, what is left (all zero)."""

    namespace: str
    removed: dict[str, int] = field(default_factory=dict)
    left: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        """True when verification found nothing left."""
        return not any(self.left.values())


class _Spool(Protocol):
    def purge(self, namespace: str) -> int: ...

    def pending(self, namespace: str | None = None) -> list[Any]: ...


def count_left(
    memory: Any,
    namespace: str,
    *,
    ids: Iterable[str] = (),
    spool: _Spool | None = None,
) -> dict[str, int]:
    """What a namespace still holds: records, edges, audit entries, spooled captures.

    Args:
        memory: the memory to inspect.
        namespace: the tenant.
        ids: memory ids to check for edges beyond the current records (e.g.
            those that existed before a forget).
        spool: the capture spool, if one is used.

    Returns:
        Counts by kind; all zero means nothing of the namespace is left.
    """
    check_namespace(namespace)
    current = [r.id for r in all_records(memory, namespace, False)]
    every = list(dict.fromkeys([*current, *ids]))
    return {
        "records": len(current),
        "edges": len(edges_of(memory, namespace, every)),
        "audit": len(memory.backend.audit(namespace)),
        "spooled": len(spool.pending(namespace)) if spool is not None else 0,
    }


def forget_namespace(
    memory: Any, namespace: str, *, spool: _Spool | None = None, verify: bool = True
) -> ForgetReport:
    """Right to be forgotten: delete a namespace's records, edges, audit, spool.

    Args:
        memory: a :class:`~hindsight_lg.HindsightMemory`.
        namespace: the tenant to erase.
        spool: the capture spool, whose pending captures of the tenant go too.
        verify: count what is left afterwards (``report.left``, all zero).

    Returns:
        What was removed and what is left.
    """
    ids = [r.id for r in all_records(memory, namespace, False)]
    report = ForgetReport(namespace)
    report.removed["spooled"] = spool.purge(namespace) if spool is not None else 0
    report.removed["audit"] = len(memory.backend.audit(namespace))
    report.removed["records"] = memory.forget(namespace)
    if verify:
        report.left = count_left(memory, namespace, ids=ids, spool=spool)
    return report


def delete_memories(
    backend: MemoryBackend,
    namespace: str,
    ids: Sequence[str] | None,
    thread_id: str | None,
) -> int:
    """Delete memories for real, with their edges, audit content and echoes.

    ``ids=None`` with no ``thread_id`` deletes the whole namespace; with a
    ``thread_id``, the memories captured from that thread. Returns how many
    memories were deleted.
    """
    whole_namespace = ids is None and thread_id is None
    if ids is None:
        where = Where(statuses=(*_ALL_STATUSES, "deleted"), thread_id=thread_id)
        ids = [r.id for r in backend.query(namespace, where, limit=10**7)]
    doomed = [] if whole_namespace else backend.get(namespace, list(ids))
    n = backend.delete(namespace, list(ids))
    backend.delete_edges(namespace, list(ids))
    scrub_turn_context(backend, namespace, doomed)
    backend.purge_audit(namespace, None if whole_namespace else list(ids))
    backend.flush()
    return n


def scrub_turn_context(
    backend: MemoryBackend, namespace: str, doomed: Sequence[MemoryRecord]
) -> None:
    """Drop the lexical context that holds a forgotten memory's words.

    Events carry the rest of their turn, and answers the question they
    answer, as lexical context (``meta["context"]``), so a forgotten
    sentence would live on in other records' index text. Those records
    share its thread and come at or after its time: their context goes
    when it holds the forgotten text or the record is a sibling (same
    time), whose context is the rest of the same turn.
    """
    by_thread: dict[str, list[MemoryRecord]] = {}
    for gone in doomed:
        by_thread.setdefault(gone.thread_id, []).append(gone)
    changed: dict[str, MemoryRecord] = {}
    for thread_id, gone_here in by_thread.items():
        # One read per thread, from its earliest forgotten memory on.
        since = min(g.event_time for g in gone_here)
        where = Where(statuses=_ALL_STATUSES, thread_id=thread_id, since=since)
        for other in backend.query(namespace, where, limit=10_000):
            context = other.meta.get(CONTEXT_KEY)
            if isinstance(context, str) and any(
                _holds(other, context, g) for g in gone_here
            ):
                changed[other.id] = other
    if not changed:
        return
    full = backend.get(namespace, list(changed), vectors=True)
    for record in full:
        record.meta.pop(CONTEXT_KEY, None)
    backend.upsert(namespace, full)


def _holds(other: MemoryRecord, context: str, gone: MemoryRecord) -> bool:
    """Whether ``other``'s lexical context came from ``gone``'s turn or text."""
    if other.event_time < gone.event_time:
        return False
    return (
        other.event_time == gone.event_time or " ".join(gone.content.split()) in context
    )
