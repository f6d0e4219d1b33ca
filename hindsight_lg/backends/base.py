"""The storage protocol every backend implements, and the filter it understands.

Every method takes the namespace (tenant) as its first argument: there is no
way to read or write without one, so isolation holds by construction. What a
backend can store, and the checks that refuse the rest, are in
:mod:`hindsight_lg.backends._limits` (re-exported here); what a backend may do
beyond this protocol, in :mod:`hindsight_lg.backends.optional`.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from hindsight_lg.backends._limits import (
    MAX_DOC_BYTES,
    MAX_ID_BYTES,
    MAX_LABEL_BYTES,
    MAX_LIST_ITEMS,
    MAX_NAME_BYTES,
    MAX_NAMESPACE_BYTES,
    MAX_OP_BYTES,
    MAX_TEXT_BYTES,
    check_audit,
    check_edge,
    check_labels,
    check_namespace,
    check_record,
    check_text,
    check_writes,
    fit_id,
    fit_label,
    utf8_size,
)
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord, Scope


@dataclass(frozen=True, slots=True)
class Where:
    """A conjunction of conditions on records, translated by each backend.

    ``reader`` applies visibility: a private memory is seen only by the agent
    that wrote it (or by everyone when it has no agent); team and global
    memories are seen by every agent of the namespace.
    """

    statuses: tuple[str, ...] = ("active",)
    kinds: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    ids: tuple[str, ...] = ()
    thread_id: str | None = None
    reader: str | None = None
    since: float | None = None
    until: float | None = None
    min_strength: float | None = None

    def matches(self, r: MemoryRecord) -> bool:
        """Reference semantics, used by the in-memory backend and by tests."""
        # StrEnum members compare equal to their values, so no .value lookups;
        # `and` stops at the first failing condition.
        return (
            (not self.statuses or r.status in self.statuses)
            and (not self.kinds or r.kind in self.kinds)
            and (not self.tiers or r.tier in self.tiers)
            and (not self.ids or r.id in self.ids)
            and (self.thread_id is None or r.thread_id == self.thread_id)
            and (self.since is None or r.event_time >= self.since)
            and (self.until is None or r.event_time < self.until)
            and (self.min_strength is None or r.strength >= self.min_strength)
            and (self.reader is None or visible_to(r, self.reader))
        )


def visible_to(record: MemoryRecord, reader: str) -> bool:
    """Whether agent ``reader`` may see ``record`` (namespace already matched)."""
    if record.scope is not Scope.PRIVATE:
        return True
    return record.agent_id in ("", reader)


def tie_order(
    record: MemoryRecord,
) -> tuple[str, tuple[str, ...], tuple[str, ...], str]:
    """How records that score alike are ordered: by what they say, then the id.

    Ids are random (``uuid4``): a tie broken by id alone ranks, and cuts at a
    limit, differently in two stores fed the same turns, so the same recall
    could not be reproduced. Content, speakers and source messages are the
    inputs themselves; the id only separates true duplicates.
    """
    return (
        record.content,
        tuple(record.participants),
        tuple(record.source_ids),
        record.id,
    )


@dataclass(frozen=True, slots=True)
class Hit:
    """A search result: the record and the path's raw score (higher is better)."""

    record: MemoryRecord
    score: float


@dataclass
class CopyReport:
    """What a copy moved, and where the store now points."""

    old_prefix: str
    new_prefix: str
    records: int = 0
    edges: int = 0
    audit: int = 0
    namespaces: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Capabilities:
    """What a backend can do natively; the engine adapts to the rest."""

    bm25: bool = False
    name: str = "unknown"
    #: Each call crosses a network (a Milvus server): a second search in a row
    #: costs a round trip, not a scan in process.
    remote: bool = False
    extra: dict[str, str] = field(default_factory=dict)


def asked_vectors(vectors: bool) -> dict[str, bool]:
    """``search_dense``'s ``vectors`` keyword for a backend below, only when asked.

    A backend written before ``search_dense`` took ``vectors`` keeps serving
    every search that does not ask for them (recall asks only for its second
    hop, and falls back where a backend refuses the keyword).

    Example:
        >>> asked_vectors(False), asked_vectors(True)
        ({}, {'vectors': True})
    """
    return {"vectors": True} if vectors else {}


@runtime_checkable
class MemoryBackend(Protocol):
    """Where memories, edges and the audit trail live.

    Two implementations ship: :class:`~hindsight_lg.backends.milvus.MilvusBackend`
    and the in-memory reference :class:`~hindsight_lg.backends.InMemoryBackend`.
    Both pass the contract suite in :mod:`hindsight_lg.testing.backend_contract`,
    which a third-party backend can run too.
    """

    # Read-only here: wrappers forward their inner backend's, which setup()
    # may refine (a Milvus server's BM25), so no view ever holds a stale copy.
    @property
    def capabilities(self) -> Capabilities:
        """What the backend does natively (known fully after :meth:`setup`)."""
        ...

    def setup(self, *, dim: int, model_id: str) -> None:
        """Create collections/indexes if missing; check the embedding model matches."""
        ...

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        """Insert or replace records (by id) in ``namespace``."""
        ...

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Records of ``namespace`` with these ids (any status), in no set order."""
        ...

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Records matching ``where``, newest event first."""
        ...

    def search_dense(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Nearest records by cosine similarity (score in [-1, 1]).

        ``vectors=True`` returns each hit's dense vector, in the same search
        (recall's second hop reuses them); without it a hit may come without.
        """
        ...

    def search_lexical(
        self, namespace: str, terms: Sequence[str], where: Where, *, limit: int
    ) -> list[Hit]:
        """Best records by BM25 over their lexical terms (score >= 0)."""
        ...

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete records for real; returns how many existed."""
        ...

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        """Insert or replace edges (one per src, type, dst)."""
        ...

    def edges(
        self, namespace: str, ids: Sequence[str], *, types: Sequence[EdgeType] = ()
    ) -> list[Edge]:
        """Edges touching any of ``ids`` (either end): one query per frontier."""
        ...

    def all_edges(self, namespace: str) -> list[Edge]:
        """Every edge of a namespace (for caches and export; paged by the backend)."""
        ...

    def delete_edges(self, namespace: str, ids: Sequence[str]) -> int:
        """Delete every edge touching ``ids``; returns how many."""
        ...

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        """Append audit entries."""
        ...

    def audit(self, namespace: str, memory_id: str | None = None) -> list[AuditEntry]:
        """Audit entries of the namespace (or of one memory), oldest first."""
        ...

    def purge_audit(
        self, namespace: str, memory_ids: Sequence[str] | None = None
    ) -> int:
        """Delete audit entries of these memories (all of the namespace if None)."""
        ...

    def namespaces(self) -> list[str]:
        """Every namespace holding at least one record."""
        ...

    def count(self, namespace: str, where: Where) -> int:
        """How many records match."""
        ...

    def flush(self) -> None:
        """Make recent writes durable and searchable."""
        ...

    def exclusive(self, namespace: str, resource: str) -> AbstractContextManager[None]:
        """A ``with`` block no other process enters for the same resource.

        The engine holds it around read-check-write sequences (compare-and-swap
        updates, consolidation). Single-process backends return
        ``contextlib.nullcontext()``: the engine's own lock already covers them.
        """
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...


__all__ = [
    "MAX_DOC_BYTES",
    "MAX_ID_BYTES",
    "MAX_LABEL_BYTES",
    "MAX_LIST_ITEMS",
    "MAX_NAMESPACE_BYTES",
    "MAX_NAME_BYTES",
    "MAX_OP_BYTES",
    "MAX_TEXT_BYTES",
    "Capabilities",
    "CopyReport",
    "Hit",
    "MemoryBackend",
    "Where",
    "asked_vectors",
    "check_audit",
    "check_edge",
    "check_labels",
    "check_namespace",
    "check_record",
    "check_text",
    "check_writes",
    "fit_id",
    "fit_label",
    "tie_order",
    "utf8_size",
    "visible_to",
]
