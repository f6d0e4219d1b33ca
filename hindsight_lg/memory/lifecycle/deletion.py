"""Deleting memories for real: records, their edges, echoes in other records' context, audit.

:func:`delete_memories` deletes; :mod:`.forgetting` runs it and takes the
forgotten words back from what was derived from them; forgetting a whole
namespace with verification is :mod:`hindsight_lg.memory.jobs.erasure`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.model import (
    CONTEXT_KEY,
    ENTITY_PREFIX,
    TURN_KEY,
    AuditEntry,
    Edge,
    MemoryRecord,
    observe_id,
)

_ALL_STATUSES = ("active", "cold", "superseded", "archived")


def entity_nodes(edges: Iterable[Edge]) -> set[str]:
    """The entity nodes (``entity:...``) at either end of ``edges``."""
    return {n for e in edges for n in (e.src, e.dst) if n.startswith(ENTITY_PREFIX)}


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
        drop_orphan_nodes(backend, namespace, nodes)
    scrub_turn_context(backend, namespace, doomed)
    purged = None if whole_namespace else ids
    if thread_id is not None and purged is not None:
        purged.append(observe_id(thread_id))  # the thread's unpromoted turns
    backend.purge_audit(namespace, purged)
    backend.flush()
    return n


def drop_orphan_nodes(
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
    answer, as lexical context (``meta["context"]``), and their whole turn
    to show around them (``meta["turn"]``), so a forgotten sentence would
    live on in other records' index text and lines. Those records
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
            kept = (other.meta.get(key) for key in (CONTEXT_KEY, TURN_KEY))
            context = " ".join(t for t in kept if isinstance(t, str))
            if context and any(_holds(other, context, g) for g in gone_here):
                changed[other.id] = other
    if not changed:
        return
    full = backend.get(namespace, list(changed), vectors=True)
    for record in full:
        record.meta.pop(CONTEXT_KEY, None)
        record.meta.pop(TURN_KEY, None)
    backend.upsert(namespace, full)


def _holds(other: MemoryRecord, context: str, gone: MemoryRecord) -> bool:
    """Whether ``other``'s lexical context came from ``gone``'s turn or text."""
    if other.event_time < gone.event_time:
        return False
    return (
        other.event_time == gone.event_time or " ".join(gone.content.split()) in context
    )


def rewrite_trail(
    backend: MemoryBackend,
    namespace: str,
    memory_id: str,
    change: Callable[[AuditEntry], AuditEntry | None],
) -> None:
    """Rewrite one memory's audit trail: ``change`` keeps, edits or drops each entry.

    The store appends audit entries and deletes them by memory, so a changed
    trail is deleted and written again (entries keep their ids and times).
    """
    entries = backend.audit(namespace, memory_id)
    kept = [c for c in map(change, entries) if c is not None]
    if kept != entries:
        backend.purge_audit(namespace, [memory_id])
        backend.append_audit(namespace, kept)
