"""Right to be forgotten, verified: records, edges, audit, queued and spooled captures.

:meth:`HindsightMemory.forget` cancels the tenant's (or thread's) captures
still queued or spooled, then deletes records, their edges (and edges of
entity nodes only the forgotten memories used) and the audit trail;
:func:`forget_namespace` then counts what is left, so ``hindsight-lg forget
--verify`` shows zeros only when nothing is left anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from hindsight_lg.backends.base import MemoryBackend, Where, check_namespace
from hindsight_lg.memory.capture.writer import observe_id
from hindsight_lg.memory.transfer.portability import all_records, edges_of
from hindsight_lg.model import CONTEXT_KEY, Edge, MemoryRecord

ENTITY_PREFIX = "entity:"

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
    def purge(self, namespace: str, thread_id: str | None = None) -> int: ...

    def pending(self, namespace: str | None = None) -> list[Any]: ...

    def dead(self) -> list[Any]: ...


def count_left(
    memory: Any,
    namespace: str,
    *,
    ids: Iterable[str] = (),
    spool: _Spool | None = None,
) -> dict[str, int]:
    """What a namespace still holds, everywhere a capture can be.

    Args:
        memory: the memory to inspect.
        namespace: the tenant.
        ids: memory ids to check for edges beyond the current records (e.g.
            those that existed before a forget).
        spool: the capture spool (the memory's own by default).

    Returns:
        Counts of ``records``, ``edges``, ``entity_nodes`` (entities some
        edge still points at), ``audit`` entries, ``queued`` captures (in the
        background worker) and ``spooled`` ones (pending or dead letters);
        all zero means nothing of the namespace is left.
    """
    check_namespace(namespace)
    spool = spool if spool is not None else getattr(memory, "spool", None)
    current = [r.id for r in all_records(memory, namespace, False)]
    every = list(dict.fromkeys([*current, *ids]))
    edges = {e.key: e for e in edges_of(memory, namespace, every)}
    edges.update({e.key: e for e in memory.backend.all_edges(namespace)})
    worker = getattr(memory, "worker", None)
    return {
        "records": len(current),
        "edges": len(edges),
        "entity_nodes": len(entity_nodes(edges.values())),
        "audit": len(memory.backend.audit(namespace)),
        "queued": worker.pending_for(namespace) if worker is not None else 0,
        "spooled": _spooled(spool, namespace),
    }


def _spooled(spool: _Spool | None, namespace: str) -> int:
    if spool is None:
        return 0
    dead = [e for e in spool.dead() if e.namespace == namespace]
    return len(spool.pending(namespace)) + len(dead)


def entity_nodes(edges: Iterable[Edge]) -> set[str]:
    """The entity nodes (``entity:...``) at either end of ``edges``."""
    return {n for e in edges for n in (e.src, e.dst) if n.startswith(ENTITY_PREFIX)}


def forget_namespace(
    memory: Any, namespace: str, *, spool: _Spool | None = None, verify: bool = True
) -> ForgetReport:
    """Right to be forgotten: delete a namespace's records, edges, audit, spool.

    Args:
        memory: a :class:`~hindsight_lg.HindsightMemory`.
        namespace: the tenant to erase.
        spool: another capture spool whose pending captures of the tenant go
            too (the memory's own spool is always purged).
        verify: count what is left afterwards (``report.left``, all zero).

    Returns:
        What was removed and what is left.
    """
    ids = [r.id for r in all_records(memory, namespace, False)]
    report = ForgetReport(namespace)
    own = getattr(memory, "spool", None)
    if _same_file(spool, own):
        spool = None  # the memory's own spool, under another object: purged below
    before = count_left(memory, namespace, ids=ids)
    report.removed["spooled"] = spool.purge(namespace) if spool is not None else 0
    report.removed["records"] = memory.forget(namespace)
    for key in ("edges", "entity_nodes", "audit", "queued"):
        report.removed[key] = before[key]
    report.removed["spooled"] += before["spooled"]
    if verify:
        report.left = count_left(memory, namespace, ids=ids, spool=spool)
    return report


def _same_file(spool: _Spool | None, own: _Spool | None) -> bool:
    if spool is None or own is None:
        return False
    if spool is own:
        return True
    mine, theirs = getattr(own, "path", None), getattr(spool, "path", None)
    return (
        mine is not None
        and theirs is not None
        and Path(mine).resolve() == Path(theirs).resolve()
    )


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
    ids = list(ids)
    doomed = [] if whole_namespace else backend.get(namespace, ids)
    nodes = entity_nodes(backend.edges(namespace, ids)) if ids else set()
    n = backend.delete(namespace, ids)
    if whole_namespace:
        # Every edge goes, imported ones between entity nodes included.
        ends = {e.src for e in backend.all_edges(namespace)}  # each edge has one
        backend.delete_edges(namespace, sorted(ends | set(ids)))
    else:
        backend.delete_edges(namespace, ids)
        _drop_orphan_nodes(backend, namespace, nodes)
    scrub_turn_context(backend, namespace, doomed)
    purged = None if whole_namespace else ids
    if thread_id is not None and purged is not None:
        purged.append(observe_id(thread_id))  # the thread's unpromoted turns
    backend.purge_audit(namespace, purged)
    backend.flush()
    return n


def _drop_orphan_nodes(
    backend: MemoryBackend, namespace: str, nodes: Iterable[str]
) -> None:
    """Delete the edges of entity nodes no remaining memory points at.

    A node that only forgotten memories mentioned would otherwise keep its
    name (``entity:john smith ssn ...``) and its links to other entities.
    """
    nodes = sorted(nodes)
    if not nodes:
        return
    used: set[str] = set()
    for edge in backend.edges(namespace, nodes):
        for end, other in ((edge.src, edge.dst), (edge.dst, edge.src)):
            if end in nodes and not other.startswith(ENTITY_PREFIX):
                used.add(end)
    orphans = [n for n in nodes if n not in used]
    if orphans:
        backend.delete_edges(namespace, orphans)


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
