"""What the panel shows, as plain data: shared by the HTML pages and the JSON API.

Every function here is synchronous and does the engine's I/O; the ASGI
handlers run them in a worker thread.

Paging is by cursor, never by offset: a page asks for the memories whose
``event_time`` is before the cursor (``Where.until``), newest first, one more
than it shows. The store serves that from its time index (the read cache keeps
one per namespace), so page 200 costs what page 1 costs. A page ends on a
timestamp boundary, so memories sharing an ``event_time`` are never skipped;
when more than a page share one, they are paged by id (the cursor is then
``"<time>:<id>"``), so no page is larger than its size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from hindsight_lg.backends import Where, visible_to
from hindsight_lg.memory import HindsightMemory
from hindsight_lg.model import AuditEntry, Edge, Kind, MemoryRecord, Status, Tier

STATUSES = ("active", "cold", "superseded", "archived")
KINDS = tuple(k.value for k in Kind)
TIERS = tuple(t.value for t in Tier)
PAGE_SIZE = 50
GROUP_SIZE = 8
MAX_PAGE = 500
NAMESPACES_PER_PAGE = 50


@dataclass(frozen=True, slots=True)
class Filters:
    """The namespace view's filters, as read from a query string."""

    kind: str = ""
    status: str = "active"
    agent: str = ""
    thread: str = ""
    tier: str = ""

    @classmethod
    def parse(cls, params: Any) -> Filters:
        """Read and validate filters from a mapping of query parameters.

        Raises:
            ValueError: an unknown kind or status.
        """
        kind = str(params.get("kind") or "")
        status = str(params.get("status") or "active")
        if kind and kind not in KINDS:
            raise ValueError(f"unknown kind {kind!r}; one of {', '.join(KINDS)}")
        if status != "all" and status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; one of all, {STATUSES}")
        tier = str(params.get("tier") or "")
        if tier and tier not in TIERS:
            raise ValueError(f"unknown tier {tier!r}; one of {', '.join(TIERS)}")
        agent, thread = str(params.get("agent") or ""), str(params.get("thread") or "")
        return cls(kind, status, agent.strip(), thread.strip(), tier)

    def where(self) -> Where:
        """The store filter these stand for (``agent``: memories it may see)."""
        return Where(
            statuses=STATUSES if self.status == "all" else (self.status,),
            kinds=(self.kind,) if self.kind else (),
            tiers=(self.tier,) if self.tier else (),
            reader=self.agent or None,
            thread_id=self.thread or None,
        )

    def query(self, **extra: Any) -> dict[str, str]:
        """These filters (plus ``extra``) as query parameters, empty ones left out."""
        values = {
            "kind": self.kind,
            "status": self.status,
            "agent": self.agent,
            "thread": self.thread,
            "tier": self.tier,
            **extra,
        }
        return {k: str(v) for k, v in values.items() if v not in ("", None)}


@dataclass(slots=True)
class Page:
    """One page of memories and the cursor of the next (``None``: the last)."""

    memories: list[MemoryRecord]
    next_cursor: str | None = None


@dataclass(slots=True)
class NamespaceView:
    """A namespace's counts and its memories, grouped by kind or one kind paged."""

    namespace: str
    filters: Filters
    by_kind: dict[str, int]
    by_status: dict[str, int]
    groups: dict[str, list[MemoryRecord]] = field(default_factory=dict)
    page: Page | None = None


Cursor = tuple[float, str | None]


def parse_cursor(raw: Any) -> Cursor | None:
    """A page cursor from a query string (``None``: the first page).

    ``"<time>"`` pages before that time; ``"<time>:<id>"`` goes on among the
    memories of that time, after that id.

    Raises:
        ValueError: not a finite number (and an optional id).
    """
    if raw in (None, ""):
        return None
    head, _, after = str(raw).partition(":")
    value = float(head)
    if not math.isfinite(value):
        raise ValueError("cursor must be a finite number")
    return value, after or None


def _cursor(when: float, after: str | None = None) -> str:
    return f"{when!r}:{after}" if after else repr(when)


def page(
    memory: HindsightMemory,
    namespace: str,
    where: Where,
    *,
    size: int = PAGE_SIZE,
    before: Cursor | float | None = None,
) -> Page:
    """Memories matching ``where`` older than the cursor, newest first.

    Args:
        memory: the engine.
        namespace: the tenant.
        where: the filter (its ``until`` is replaced by the cursor).
        size: how many at most.
        before: the cursor from the previous page.
    """
    size = max(1, min(size, MAX_PAGE))
    if isinstance(before, (int, float)):
        before = (float(before), None)
    if before is not None and before[1] is not None:
        return _ties(memory, namespace, where, before[0], before[1], size)
    until = None if before is None else before[0]
    rows = memory.query(namespace, replace(where, until=until), limit=size + 1)
    if len(rows) <= size:
        return Page(rows)
    boundary = rows[size].event_time
    shown = [r for r in rows[:size] if r.event_time > boundary]
    if shown:
        # Everything newer than the boundary is shown; the next page starts
        # at the boundary itself, ties included.
        return Page(shown, _cursor(math.nextafter(boundary, math.inf)))
    # A whole page shares one timestamp: page through it by id.
    return _ties(memory, namespace, where, boundary, None, size)


def _ties(
    memory: HindsightMemory,
    namespace: str,
    where: Where,
    when: float,
    after: str | None,
    size: int,
) -> Page:
    """One page of the memories at exactly ``when``, by id descending after ``after``."""
    ties = memory.query(
        namespace,
        replace(where, since=when, until=math.nextafter(when, math.inf)),
        limit=10**6,
    )
    ties.sort(key=lambda r: r.id, reverse=True)
    rest = [r for r in ties if after is None or r.id < after]
    if len(rest) > size:
        return Page(rest[:size], _cursor(when, rest[size - 1].id))
    return Page(rest, _cursor(when))


def namespace_view(
    memory: HindsightMemory,
    namespace: str,
    filters: Filters,
    *,
    before: Cursor | None = None,
    size: int = PAGE_SIZE,
) -> NamespaceView:
    """The namespace page: counts, then one group per kind or one kind paged."""
    where = filters.where()
    by_kind = {
        k: n
        for k in KINDS
        if (n := memory.count(namespace, replace(where, kinds=(k,))))
    }
    by_status = {
        s: memory.count(namespace, replace(where, statuses=(s,))) for s in STATUSES
    }
    view = NamespaceView(namespace, filters, by_kind, by_status)
    if filters.kind:
        view.page = page(memory, namespace, where, size=size, before=before)
        return view
    for kind in by_kind:
        kind_where = replace(where, kinds=(kind,))
        view.groups[kind] = memory.query(namespace, kind_where, limit=GROUP_SIZE)
    return view


def namespaces(
    memory: HindsightMemory,
    only: str | None = None,
    *,
    start: int = 0,
    size: int = NAMESPACES_PER_PAGE,
    reader: str | None = None,
) -> tuple[list[dict[str, Any]], int]:
    """One page of namespaces (or just ``only``) with their counts, and how many exist.

    Counting reads each namespace through the engine's read cache, so the
    list is paged: one page costs its own namespaces, not every tenant's.
    ``reader`` counts only what that agent may see.
    """
    names = [only] if only else memory.namespaces()
    everything = Where(statuses=STATUSES, reader=reader)
    rows = [
        {
            "namespace": ns,
            "total": memory.count(ns, everything),
            "active": memory.count(ns, Where(reader=reader)),
        }
        for ns in names[max(0, start) : max(0, start) + size]
    ]
    return rows, len(names)


@dataclass(slots=True)
class Link:
    """One edge seen from a memory: its type, direction and the other end."""

    edge: Edge
    outgoing: bool
    other_id: str
    other: MemoryRecord | None


@dataclass(slots=True)
class MemoryView:
    """A memory with its edges and audit trail."""

    record: MemoryRecord
    links: list[Link]
    audit: list[AuditEntry]

    @property
    def unverified_lesson(self) -> bool:
        """An experience lesson not confirmed yet (a rejected one is archived)."""
        return (
            self.record.kind is Kind.EXPERIENCE
            and not self.record.meta.get("verified")
            and self.record.status in (Status.ACTIVE, Status.COLD)
        )

    @property
    def restorable(self) -> bool:
        """Cold and archived memories can be brought back."""
        return self.record.status in (Status.COLD, Status.ARCHIVED)

    @property
    def rollbackable(self) -> bool:
        """A current memory's write can be undone (``rollback``)."""
        return self.record.status in (Status.ACTIVE, Status.COLD)

    @property
    def correctable(self) -> bool:
        """Superseded memories are history: their successor is corrected instead."""
        return self.record.status not in (Status.SUPERSEDED, Status.DELETED)


def seen_by(
    memory: HindsightMemory, namespace: str, memory_id: str, reader: str | None
) -> MemoryRecord:
    """The memory ``memory_id`` if ``reader`` (``None``: anyone) may see it.

    Raises:
        KeyError: no such memory in ``namespace``, or one hidden from ``reader``
            (the same answer, so an id tells an agent nothing).
    """
    record = memory.get(namespace, memory_id) if memory_id else None
    if record is None or (reader is not None and not visible_to(record, reader)):
        raise KeyError(f"no memory {memory_id!r} in namespace {namespace!r}")
    return record


def memory_view(
    memory: HindsightMemory,
    namespace: str,
    memory_id: str,
    reader: str | None = None,
) -> MemoryView:
    """One memory of ``namespace`` with its edges (as links) and its audit trail.

    With ``reader``, what that agent may not see is left out: the memory
    itself (``KeyError``), links to such memories and their ids anywhere
    in the record or its audit trail.

    Raises:
        KeyError: no such memory in ``namespace`` (or none ``reader`` may see).
    """
    record = seen_by(memory, namespace, memory_id, reader)
    edges = memory.edges(namespace, memory_id)
    others = {e.dst if e.src == memory_id else e.src for e in edges}
    found = {r.id: r for r in memory.get_many(namespace, sorted(others))}
    audit = memory.audit(namespace, memory_id)
    hidden: set[str] = set()
    if reader is not None:
        hidden = hidden_among(memory, namespace, [record, *audit], reader)
        hidden |= {i for i, r in found.items() if not visible_to(r, reader)}
        record = without_ids(record, hidden)
        audit = [replace(a, detail=scrubbed(a.detail, hidden)) for a in audit]
    links = []
    for e in sorted(edges, key=lambda e: (e.type.value, -e.created_at)):
        outgoing = e.src == memory_id
        other = e.dst if outgoing else e.src
        if other not in hidden:
            links.append(Link(e, outgoing, other, found.get(other)))
    return MemoryView(record, links, audit)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def hidden_among(
    memory: HindsightMemory,
    namespace: str,
    items: list[MemoryRecord | AuditEntry],
    reader: str,
) -> set[str]:
    """Ids named by the record's links and the audit details that ``reader`` may not see."""
    named: set[str] = set()
    for item in items:
        if isinstance(item, AuditEntry):
            named.update(_strings(item.detail))
        else:
            named.update(_strings(item.meta.get("derived_from", [])))
            named.update([item.superseded_by] if item.superseded_by else [])
    rows = memory.get_many(namespace, sorted(named)) if named else []
    return {r.id for r in rows if not visible_to(r, reader)}


def scrubbed(value: Any, hidden: set[str]) -> Any:
    """``value`` without the strings in ``hidden``, as values or list items."""
    if isinstance(value, dict):
        return {
            k: scrubbed(v, hidden)
            for k, v in value.items()
            if not (isinstance(v, str) and v in hidden)
        }
    if isinstance(value, list):
        return [
            scrubbed(v, hidden)
            for v in value
            if not (isinstance(v, str) and v in hidden)
        ]
    return value


def without_ids(record: MemoryRecord, hidden: set[str]) -> MemoryRecord:
    """A copy of ``record`` that links to no memory in ``hidden``."""
    if not hidden:
        return record
    shown = record.replace()
    if shown.superseded_by in hidden:
        shown.superseded_by = None
    if "derived_from" in shown.meta:
        shown.meta["derived_from"] = scrubbed(shown.meta["derived_from"], hidden)
    return shown


def record_json(record: MemoryRecord) -> dict[str, Any]:
    """A memory as JSON (no vectors)."""
    data = record.to_dict(vectors=False)
    data.pop("meta", None)
    data["meta"] = {k: v for k, v in record.meta.items() if k != "context"}
    return data


def when(ts: float | None) -> str:
    """POSIX seconds as ``YYYY-MM-DD HH:MM`` UTC (``—`` for never)."""
    if not ts:
        return "—"
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M")
