"""Forgetting for real: the memories go, and their words leave what was derived from them.

:func:`forget` is what :meth:`Lifecycle.forget` runs. Besides deleting the
forgotten memories (:func:`.deletion.delete_memories`: records, edges, entity
nodes no one else uses, context echoes, audit), it takes their words out of
the places they spread to:

- **Consolidated memories** (records with ``meta["derived_from"]``) that a
  forgotten or changed episode fed are made again from the episodes that
  remain (:func:`.consolidate.rebuilt_summary`: new text, vector, names,
  sources and ``mentions`` edges), or deleted when none remain. Forgetting a
  thread does not delete a consolidated memory because its first episode came
  from that thread: it is rebuilt like any other.
- **Merges** (:mod:`hindsight_lg.memory.capture.merges`): forgetting a thread
  takes back what its restatements added to other memories (sources, names)
  and their ``merge`` audit entries; the memory notes an ``unmerge``.
- **Reflection lessons** that cite a forgotten memory or a rebuilt
  consolidated one (``source_ids``), or were learnt in a forgotten thread
  (``meta["thread_id"]``), are deleted: they quote them.
- **Audit text**: consolidation and merges record ids, not text. A rebuilt
  memory's trail loses the text older entries held (its ``content``), and
  forgetting a thread strips the text merge entries and ``meta["details"]``
  of an older version kept anywhere in the namespace: which thread they came
  from was not recorded, so none may keep it. That costs one read of the
  namespace's audit trail per forgotten thread.

Forgetting a whole namespace deletes everything, so none of this is needed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.memory.capture.merges import (
    DETAILS_KEY,
    MERGED_OP,
    has_text,
    merges,
    unmerge,
)
from hindsight_lg.memory.lifecycle.consolidate import derived_members, rebuilt_summary
from hindsight_lg.memory.lifecycle.deletion import (
    delete_memories,
    drop_orphan_nodes,
    entity_nodes,
    rewrite_trail,
)
from hindsight_lg.memory.lifecycle.ids import resolve_known
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    MemoryRecord,
    entity_id,
    observe_id,
)

# The text of a consolidated memory (with its vector) from its episodes.
Summarise = Callable[[Sequence[MemoryRecord]], tuple[str, list[float]]]

_EVERY_STATUS = ("active", "cold", "superseded", "archived", "deleted")


def forget(
    backend: MemoryBackend,
    namespace: str,
    ids: Sequence[str] | None,
    thread_id: str | None,
    *,
    summarise: Summarise,
    now: float,
) -> int:
    """Delete memories and take their words back; returns how many were deleted.

    ``ids=None`` with no ``thread_id`` deletes the whole namespace; with a
    ``thread_id``, what that thread contributed. An id may be the unique
    prefix a listing printed (:func:`.ids.resolve_known`).

    Raises:
        ValueError: an id is the prefix of several memories' ids.
    """
    if ids is None and thread_id is None:
        return delete_memories(backend, namespace, None, None)
    doomed = (
        resolve_known(backend, namespace, ids)
        if ids is not None
        else _thread_records(backend, namespace, thread_id)
    )
    gone = set(doomed)
    changed = []
    if thread_id is not None:
        changed = _unmerge_thread(backend, namespace, thread_id, gone, now)
        _scrub_old_merges(backend, namespace)
    summaries = _summaries_of(backend, namespace, [*doomed, *changed]) - gone
    n = delete_memories(backend, namespace, doomed, thread_id)
    n += _rederive(backend, namespace, sorted(summaries), gone, summarise, now)
    lessons = _lessons_of(backend, namespace, gone | summaries, thread_id)
    n += delete_memories(backend, namespace, lessons, None)
    backend.flush()
    return n


def _thread_records(
    backend: MemoryBackend, namespace: str, thread_id: str | None
) -> list[str]:
    """The thread's memories, less the consolidated ones (rebuilt, not deleted)."""
    where = Where(statuses=_EVERY_STATUS, thread_id=thread_id)
    rows = backend.query(namespace, where, limit=10**7)
    return [r.id for r in rows if derived_members(r) is None]


def _lessons_of(
    backend: MemoryBackend, namespace: str, ids: set[str], thread_id: str | None
) -> list[str]:
    """Reflection lessons that cite any of ``ids`` or were learnt in the thread.

    A lesson quotes the memories it judged and the request of its run, and
    cannot be written again without the run: it goes.
    """
    where = Where(statuses=_EVERY_STATUS, kinds=("experience",))
    return [
        r.id
        for r in backend.query(namespace, where, limit=10**7)
        if ids.intersection(r.source_ids)
        or (thread_id is not None and r.meta.get("thread_id") == thread_id)
    ]


def _summaries_of(
    backend: MemoryBackend, namespace: str, ids: Sequence[str]
) -> set[str]:
    """The consolidated memories derived from any of ``ids``."""
    if not ids:
        return set()
    wanted = set(ids)
    edges = backend.edges(namespace, list(ids), types=(EdgeType.DERIVED_FROM,))
    return {e.src for e in edges if e.dst in wanted}


def _unmerge_thread(
    backend: MemoryBackend, namespace: str, thread_id: str, gone: set[str], now: float
) -> list[str]:
    """Take the thread's restatements out of the memories they merged into."""
    markers = backend.audit(namespace, observe_id(thread_id))
    into = {str(e.detail.get("into")) for e in markers if e.op == MERGED_OP}
    changed = []
    for record in backend.get(namespace, sorted(into - gone), vectors=True):
        taken = unmerge(record, lambda m: m.get("thread_id") == thread_id)
        rewrite_trail(
            backend, namespace, record.id, lambda e: _without_thread(e, thread_id)
        )
        if taken:
            record.version += 1
            changed.append(record)
            entry = AuditEntry(namespace, record.id, "unmerge", now, {"from": taken})
            backend.append_audit(namespace, [entry])
    if changed:
        backend.upsert(namespace, changed)
    return [r.id for r in changed]


def _without_thread(entry: AuditEntry, thread_id: str) -> AuditEntry | None:
    if entry.op == "merge" and entry.detail.get("thread_id") == thread_id:
        return None
    return entry


def _scrub_old_merges(backend: MemoryBackend, namespace: str) -> None:
    """Strip the text an older version kept of merges (audit and details)."""
    holders = sorted({e.memory_id for e in backend.audit(namespace) if _old_merge(e)})
    if not holders:
        return
    for memory_id in holders:
        rewrite_trail(backend, namespace, memory_id, _scrubbed_merge)
    records = [r for r in backend.get(namespace, holders, vectors=True) if has_text(r)]
    for record in records:
        _keep_merges(record)
        record.version += 1
    backend.upsert(namespace, records)


def _old_merge(entry: AuditEntry) -> bool:
    return entry.op == "merge" and "content" in entry.detail


def _scrubbed_merge(entry: AuditEntry) -> AuditEntry:
    return _without_text(entry) if _old_merge(entry) else entry


def _without_text(entry: AuditEntry) -> AuditEntry:
    detail = {k: v for k, v in entry.detail.items() if k != "content"}
    return replace(entry, detail=detail)


def _keep_merges(record: MemoryRecord) -> None:
    """Keep only the id entries of ``meta["details"]`` (older text ones go)."""
    kept = merges(record)
    if kept:
        record.meta[DETAILS_KEY] = kept
    else:
        record.meta.pop(DETAILS_KEY, None)


def _rederive(
    backend: MemoryBackend,
    namespace: str,
    summary_ids: Sequence[str],
    gone: set[str],
    summarise: Summarise,
    now: float,
) -> int:
    """Make each consolidated memory again from its remaining episodes.

    Returns how many were deleted because none remained.
    """
    deleted = 0
    for summary in backend.get(namespace, list(summary_ids), vectors=True):
        members = derived_members(summary) or []
        left = [m for m in members if m not in gone]
        rest = backend.get(namespace, left, vectors=True) if left else []
        if not rest:
            deleted += delete_memories(backend, namespace, [summary.id], None)
            continue
        text, dense = summarise(rest)
        fresh = rebuilt_summary(summary, rest, text, now)
        fresh.dense = dense
        backend.upsert(namespace, [fresh])
        _relink(backend, namespace, fresh, now)
        rewrite_trail(backend, namespace, fresh.id, _without_text)
        forgotten = sorted(set(members) - {r.id for r in rest})
        detail = {"derived_from": [r.id for r in rest], "forgotten": forgotten}
        entry = AuditEntry(namespace, fresh.id, "rederive", now, detail)
        backend.append_audit(namespace, [entry])
    return deleted


def _relink(
    backend: MemoryBackend, namespace: str, summary: MemoryRecord, now: float
) -> None:
    """Point a rebuilt memory's ``derived_from`` and ``mentions`` edges anew."""
    members = set(derived_members(summary) or [])
    nodes = {entity_id(e) for e in summary.entities}
    edges = backend.edges(namespace, [summary.id])
    kept = [e for e in edges if not _stale(e, summary.id, members, nodes)]
    have = {(e.type, e.dst) for e in kept if e.src == summary.id}
    fresh = [
        Edge(namespace, summary.id, dst, kind, weight, now)
        for kind, weight, ends in (
            (EdgeType.DERIVED_FROM, 0.8, members),
            (EdgeType.MENTIONS, 1.0, nodes),
        )
        for dst in sorted(ends)
        if (kind, dst) not in have
    ]
    backend.delete_edges(namespace, [summary.id])
    backend.add_edges(namespace, [*kept, *fresh])
    drop_orphan_nodes(backend, namespace, entity_nodes(edges) - nodes)


def _stale(edge: Edge, src: str, members: set[str], nodes: set[str]) -> bool:
    if edge.src != src:
        return False
    if edge.type is EdgeType.DERIVED_FROM:
        return edge.dst not in members
    return edge.type is EdgeType.MENTIONS and edge.dst not in nodes
