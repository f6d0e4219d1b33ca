"""Undo in one step: a wrong write, or everything a thread or a time span wrote.

A wrong supersede makes the truth history; a bad import or a test thread
fills a tenant with memories nobody said. ``Lifecycle.rollback`` takes a
:class:`Selection` (one memory, one thread, or the memories written between
two times) and, in one audited step under the namespace's write lock:

* every memory of the selection that superseded another, and is itself still
  current, gives it back: the earlier memory is current again (active, its
  ``superseded_by`` cleared, its kind's seed importance back);
* every memory of the selection is archived: not recalled, restorable with
  ``restore``, its words kept (``forget`` erases them for real).

A memory the selection superseded *after* something newer superseded it
stays history: the newer statement, outside the selection, is current. A
restatement that merged into an earlier memory (rather than making its own)
is not undone: the earlier memory was there before it. The ``supersedes``
edge stays, as history (recall's graph never follows it); each changed memory
gets a ``rollback`` audit entry naming the selection and what it became.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from hindsight_lg.backends.base import MemoryBackend, Where, visible_to
from hindsight_lg.memory.lifecycle import ids
from hindsight_lg.memory.policy import Policy
from hindsight_lg.model import AuditEntry, EdgeType, MemoryRecord, Status

_CURRENT = (Status.ACTIVE, Status.COLD)
_STORED = tuple(s.value for s in Status if s is not Status.DELETED)
_SCAN = 1_000_000  # a time span is matched on created_at: the namespace is read


@dataclass(frozen=True, slots=True)
class Selection:
    """What to roll back: one memory, one thread, or a span of write times.

    Example:
        >>> Selection(thread_id="t9").describe()
        {'thread_id': 't9'}
    """

    memory_id: str | None = None
    thread_id: str | None = None
    since: float | None = None
    until: float | None = None
    #: Only memories this agent may see are selected or given back.
    agent_id: str | None = None

    def __post_init__(self) -> None:
        chosen = [
            self.memory_id is not None,
            self.thread_id is not None,
            self.since is not None or self.until is not None,
        ]
        if sum(chosen) != 1:
            raise ValueError(
                "roll back one thing: a memory_id, a thread_id, or a time span "
                "(since and/or until)"
            )
        if (
            self.since is not None
            and self.until is not None
            and self.since >= self.until
        ):
            raise ValueError(
                f"since ({self.since}) must be before until ({self.until})"
            )

    def describe(self) -> dict[str, Any]:
        """The selection as the audit trail records it."""
        named = ("memory_id", "thread_id", "since", "until", "agent_id")
        return {n: getattr(self, n) for n in named if getattr(self, n) is not None}


@dataclass(slots=True)
class Rollback:
    """What a rollback did (or, with ``dry_run``, would do): memory ids."""

    selection: Selection
    archived: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    dry_run: bool = False

    def __bool__(self) -> bool:
        return bool(self.archived or self.restored)


def named(backend: MemoryBackend, namespace: str, sel: Selection) -> Selection:
    """``sel`` with its ``memory_id`` made whole (a listed prefix names one memory).

    Raises:
        KeyError: ``memory_id`` names no memory of ``namespace`` that the
            selection's agent may see (:class:`~.ids.UnknownMemory`).
        ValueError: it is the prefix of several (:class:`~.ids.AmbiguousMemory`).
    """
    if sel.memory_id is None:
        return sel
    full = ids.resolve(backend, namespace, sel.memory_id, sel.agent_id)
    return replace(sel, memory_id=full)


def selected(
    backend: MemoryBackend, namespace: str, sel: Selection
) -> list[MemoryRecord]:
    """The stored memories (any status but deleted) the selection names.

    Raises:
        KeyError: ``memory_id`` names no memory of ``namespace``.
    """
    reader = sel.agent_id
    if sel.memory_id is not None:
        rows = backend.get(namespace, [sel.memory_id], vectors=True)
        rows = [r for r in rows if reader is None or visible_to(r, reader)]
        if not rows:
            raise KeyError(f"no memory {sel.memory_id!r} in namespace {namespace!r}")
        return rows
    if sel.thread_id is not None:
        where = Where(statuses=_STORED, thread_id=sel.thread_id, reader=reader)
        return backend.query(namespace, where, limit=_SCAN, vectors=True)
    where = Where(statuses=_STORED, reader=reader)
    rows = backend.query(namespace, where, limit=_SCAN, vectors=True)
    low = float("-inf") if sel.since is None else sel.since
    high = float("inf") if sel.until is None else sel.until
    return [r for r in rows if low <= r.created_at < high]


def given_back(
    backend: MemoryBackend,
    namespace: str,
    chosen: Sequence[MemoryRecord],
    reader: str | None = None,
) -> list[MemoryRecord]:
    """The memories outside ``chosen`` that its current memories superseded.

    With ``reader``, only those that agent may see.
    """
    ids = {r.id for r in chosen}
    current = {r.id for r in chosen if r.status in _CURRENT}
    if not current:
        return []
    edges = backend.edges(namespace, sorted(current), types=[EdgeType.SUPERSEDES])
    olds = sorted({e.dst for e in edges if e.src in current and e.dst not in ids})
    return [
        r
        for r in backend.get(namespace, olds, vectors=True)
        if r.status is Status.SUPERSEDED
        and r.superseded_by in current
        and (reader is None or visible_to(r, reader))
    ]


def undo(
    chosen: Sequence[MemoryRecord],
    back: Sequence[MemoryRecord],
    policy: Policy,
) -> tuple[list[MemoryRecord], list[MemoryRecord]]:
    """Archive ``chosen`` and make ``back`` current again, in place: what changed."""
    archived = [r for r in chosen if r.status is not Status.ARCHIVED]
    for r in archived:
        r.status = Status.ARCHIVED
        r.version += 1
    for r in back:
        r.status, r.superseded_by = Status.ACTIVE, None
        r.importance = policy.importance(r.kind)
        r.version += 1
    return archived, list(back)


def audit_entries(
    namespace: str,
    sel: Selection,
    archived: Sequence[MemoryRecord],
    back: Sequence[MemoryRecord],
    now: float,
) -> list[AuditEntry]:
    """One ``rollback`` entry per changed memory: the selection's fields, and
    what the memory became (``to``: ``archived`` or ``active``)."""
    what = sel.describe()

    def entry(r: MemoryRecord, to: str) -> AuditEntry:
        return AuditEntry(namespace, r.id, "rollback", now, {**what, "to": to})

    return [entry(r, "archived") for r in archived] + [entry(r, "active") for r in back]


def apply(
    backend: MemoryBackend,
    namespace: str,
    sel: Selection,
    policy: Policy,
    now: float,
    *,
    dry_run: bool = False,
) -> Rollback:
    """Roll back what ``sel`` names (the caller holds the namespace's locks).

    Raises:
        KeyError: ``memory_id`` names no memory of ``namespace``.
        ValueError: ``memory_id`` is the prefix of several memories' ids.
    """
    sel = named(backend, namespace, sel)
    chosen = selected(backend, namespace, sel)
    back = given_back(backend, namespace, chosen, sel.agent_id)
    if dry_run:
        live = [r.id for r in chosen if r.status is not Status.ARCHIVED]
        return Rollback(sel, live, [r.id for r in back], dry_run=True)
    archived, back = undo(chosen, back, policy)
    if archived or back:
        backend.upsert(namespace, [*archived, *back])
        backend.append_audit(
            namespace, audit_entries(namespace, sel, archived, back, now)
        )
        backend.flush()
    return Rollback(sel, [r.id for r in archived], [r.id for r in back])
