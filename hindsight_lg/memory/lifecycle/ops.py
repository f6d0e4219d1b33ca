"""Lifecycle operations: update, remember, reinforce, decay, consolidate, forget.

:class:`Lifecycle` is a collaborator of
:class:`~hindsight_lg.memory.engine.HindsightMemory`, like its writer and
searcher; it holds the I/O, while :mod:`.strength` and :mod:`.consolidate`
hold the maths.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from hindsight_lg import telemetry
from hindsight_lg._text import summarize
from hindsight_lg.backends.base import Where, check_labels, check_namespace, check_text
from hindsight_lg.errors import ConflictError
from hindsight_lg.memory._locks import FORGET_LEASE
from hindsight_lg.memory.capture.vectors import embed_records
from hindsight_lg.memory.lifecycle import _journal as journal
from hindsight_lg.memory.lifecycle import correct as correction
from hindsight_lg.memory.lifecycle import rollback as undoing
from hindsight_lg.memory.lifecycle import strength as lifecycle
from hindsight_lg.memory.lifecycle.consolidate import (
    ClusterParams,
    cluster,
    extractive_summary,
    llm_summary,
    semantic_record,
)
from hindsight_lg.memory.lifecycle.correct import Correction, CorrectionFactors
from hindsight_lg.memory.lifecycle.forgetting import forget as forget_memories
from hindsight_lg.memory.lifecycle.rollback import Rollback, Selection
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    Scope,
    SourceKind,
    Status,
    Tier,
    entity_id,
)

if TYPE_CHECKING:
    from hindsight_lg.backends.base import MemoryBackend
    from hindsight_lg.embeddings.base import Embedder
    from hindsight_lg.memory.policy import Policy

Progress = Callable[[int, int], None]


class TurnMemo(Protocol):
    """What forgetting needs of the engine's writer: its memo of last turns."""

    def forget_turns(self, namespace: str) -> None:
        """Drop the remembered last turns of ``namespace``'s threads."""


_UPDATABLE = frozenset(
    {
        "content",
        "summary",
        "kind",
        "importance",
        "confidence",
        "status",
        "valid_until",
        "entities",
        "participants",
        "goal",
        "action",
        "emotion",
        "scope",
        "tier",
        "half_life_days",
        "meta",
        "strength",
        "superseded_by",
        "event_time",
        "source_kind",
    }
)


class Lifecycle:
    """Lifecycle operations of one engine (see the module docstring).

    Args:
        backend: the engine's (cached) backend.
        embedder: embeds new or changed content.
        policy: half-lives, importances and thresholds.
        llm: optional chat model for consolidation summaries.
        clock: "now" as POSIX seconds.
        write_lock: the engine's write lock, shared with capture.
        writer: the engine's writer, whose turn memo forgetting clears.
    """

    def __init__(
        self,
        backend: MemoryBackend,
        embedder: Embedder,
        policy: Policy,
        *,
        llm: Any,
        clock: Callable[[], float],
        write_lock: threading.RLock,
        writer: TurnMemo,
    ) -> None:
        self.backend = backend
        self.embedder = embedder
        self.policy = policy
        self.llm = llm
        self.clock = clock
        self._write_lock = write_lock
        self._writer = writer
        # Set by an engine with a capture spool: commits staged captures.
        self.before_write: Callable[[], None] | None = None

    @contextmanager
    def _locked(self, namespace: str) -> Iterator[None]:
        """Hold one namespace against captures and other lifecycle writes.

        Captures acknowledged but not yet in the store are committed first
        (``before_write``): a crash must never replay a capture whose
        records this operation already changed (moved cold, superseded).
        """
        hold = getattr(self._write_lock, "namespace", None)
        with hold(namespace) if hold is not None else self._write_lock:
            if self.before_write is not None:
                self.before_write()
            yield

    @property
    def write_lock(self) -> threading.RLock:
        """The engine's write lock (re-entrant), shared with capture."""
        return self._write_lock

    def _load(self, namespace: str, memory_id: str) -> MemoryRecord:
        rows = self.backend.get(check_namespace(namespace), [memory_id], vectors=True)
        if not rows:
            raise KeyError(f"no memory {memory_id!r} in namespace {namespace!r}")
        return rows[0]

    def read(self, namespace: str, memory_id: str) -> MemoryRecord:
        """One memory with its vector, as stored now (for compare-and-swap).

        Raises:
            KeyError: no such memory in ``namespace``.
        """
        return self._load(namespace, memory_id)

    def _save(
        self,
        namespace: str,
        records: Sequence[MemoryRecord],
        op: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        now = self.clock()
        self.backend.upsert(namespace, records)
        self.backend.append_audit(
            namespace,
            [AuditEntry(namespace, r.id, op, now, dict(detail or {})) for r in records],
        )
        self.backend.flush()

    def update(
        self,
        namespace: str,
        memory_id: str,
        *,
        expected_version: int | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        """Change fields of a memory, with compare-and-swap on its version.

        Args:
            namespace: the tenant.
            memory_id: the memory to change.
            expected_version: the version the caller read; a newer stored version
                raises :class:`ConflictError` (re-read and retry).
            changes: fields to set; a new ``content`` is re-embedded.

        Raises:
            KeyError: no such memory. ValueError: a field that cannot be set.
            ConflictError: the stored version is not ``expected_version``.
        """
        unknown = set(changes) - _UPDATABLE
        if unknown:
            raise ValueError(
                f"cannot update {sorted(unknown)}; allowed: {sorted(_UPDATABLE)}"
            )
        if "content" in changes:
            check_text(changes["content"], "content")
        with (
            telemetry.memory_span(
                telemetry.UPDATE,
                telemetry.UPDATE_MEMORY,
                namespace=namespace,
                memory_id=memory_id,
            ),
            self._locked(namespace),
            self.backend.exclusive(namespace, f"memory:{memory_id}"),
        ):
            record = self._load(namespace, memory_id)
            if expected_version is not None and record.version != expected_version:
                raise ConflictError(
                    f"memory {memory_id} is at version {record.version}, "
                    f"not {expected_version}: re-read it and retry"
                )
            for key, value in changes.items():
                setattr(record, key, value)
            record.__post_init__()
            if "content" in changes:
                record.dense = embed_records(self.embedder, [record.content])[0]
                if "summary" not in changes:  # the old summary told the old text
                    record.summary = summarize(record.content)
            record.version += 1
            self._save(
                namespace,
                [record],
                "update",
                {"fields": sorted(changes), "content": record.content},
            )
            return record

    def remember(
        self,
        content: str,
        *,
        namespace: str,
        kind: Kind | str = Kind.FACT,
        importance: float | None = None,
        confidence: float | None = None,
        agent_id: str | None = None,
        scope: Scope | str = Scope.PRIVATE,
        meta: dict[str, Any] | None = None,
        source_ids: Sequence[str] | None = None,
        entities: Sequence[str] = (),
        tier: Tier | str | None = None,
        source_kind: SourceKind | str = SourceKind.AGENT_INFERRED,
    ) -> MemoryRecord:
        """Write one memory as given, without extraction, merging or supersession.

        Used for rules an application states, reflection lessons and imports of
        curated knowledge.
        """
        check_namespace(namespace)
        check_text(content, "content")
        if not content.strip():
            raise ValueError("content must be non-empty text")
        check_labels(entities, "entities")
        check_labels(source_ids or (), "source_ids")
        kind = Kind(kind)
        now = self.clock()
        record = MemoryRecord(
            namespace=namespace,
            content=content.strip(),
            kind=kind,
            agent_id=agent_id or "",
            scope=Scope(scope),
            tier=Tier(tier)
            if tier
            else (
                Tier.PROCEDURAL
                if kind in (Kind.RULE, Kind.EXPERIENCE)
                else Tier.SEMANTIC
            ),
            event_time=now,
            created_at=now,
            importance=self.policy.importance(kind)
            if importance is None
            else importance,
            confidence=1.0 if confidence is None else confidence,
            half_life_days=self.policy.half_life(kind),
            entities=list(entities),
            source_ids=list(source_ids or []),
            meta=dict(meta or {}),
            source_kind=SourceKind(source_kind),
        )
        record.summary = record.content[:120]
        return self.put(namespace, record, op="create")

    def put(
        self,
        namespace: str,
        record: MemoryRecord,
        *,
        op: str = "create",
        detail: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        """Store ``record`` as given (replacing one with its id), embedded if needed.

        The write takes the engine's write lock, gets a span and an audit
        entry, and links the record to its entities.
        """
        check_namespace(namespace)
        if record.namespace != namespace:
            raise ValueError(
                f"record belongs to {record.namespace!r}, not {namespace!r}"
            )
        if not record.dense:
            record.dense = embed_records(self.embedder, [record.content])[0]
        with (
            telemetry.memory_span(
                telemetry.CAPTURE,
                telemetry.CREATE_MEMORY,
                namespace=namespace,
                kind_of_memory=record.kind.value,
            ),
            self._locked(namespace),
        ):
            self._save(
                namespace, [record], op, {"content": record.content, **(detail or {})}
            )
            now = self.clock()
            self.backend.add_edges(
                namespace,
                [
                    Edge(
                        namespace, record.id, entity_id(e), EdgeType.MENTIONS, 1.0, now
                    )
                    for e in record.entities
                ],
            )
        return record

    def reinforce(self, namespace: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Mark memories as successfully used: stronger, longer-lived, more important."""
        return self._transition(
            namespace,
            ids,
            "reinforce",
            lambda r, now: lifecycle.reinforce(r, self.policy, now),
        )

    def weaken(
        self, namespace: str, ids: Sequence[str], factor: float = 0.5
    ) -> list[MemoryRecord]:
        """Mark memories as misleading: less important, less trusted, faster fading."""
        return self._transition(
            namespace, ids, "weaken", lambda r, now: lifecycle.weaken(r, factor, now)
        )

    def restore(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Bring a cold or archived memory back to active."""
        return self._transition(namespace, [memory_id], "restore", lifecycle.restore)[0]

    def correct(
        self,
        namespace: str,
        memory_id: str,
        text: str,
        factors: CorrectionFactors | None = None,
    ) -> Correction:
        """Replace a memory by a person's correction; see :mod:`.correct`."""
        return correction.correct(self, namespace, memory_id, text, factors)

    def rollback(
        self, namespace: str, selection: Selection, *, dry_run: bool = False
    ) -> Rollback:
        """Undo what ``selection`` wrote in one audited step; see :mod:`.rollback`."""
        check_namespace(namespace)
        with (
            telemetry.memory_span(
                "hindsight.rollback", telemetry.UPDATE_MEMORY, namespace=namespace
            ),
            self._locked(namespace),
            self.backend.exclusive(namespace, FORGET_LEASE),
        ):
            chosen = undoing.selected(self.backend, namespace, selection)
            back = undoing.given_back(
                self.backend, namespace, chosen, selection.agent_id
            )
            if dry_run:
                live = [r.id for r in chosen if r.status is not Status.ARCHIVED]
                return Rollback(selection, live, [r.id for r in back], dry_run=True)
            archived, back = undoing.undo(chosen, back, self.policy)
            if archived or back:
                self.backend.upsert(namespace, [*archived, *back])
                entries = undoing.audit_entries(
                    namespace, selection, archived, back, self.clock()
                )
                self.backend.append_audit(namespace, entries)
                self.backend.flush()
            return Rollback(selection, [r.id for r in archived], [r.id for r in back])

    def confirm_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Verify an experience lesson so that it joins ordinary recall."""
        return correction.review_lesson(self, namespace, memory_id, confirm=True)

    def reject_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Archive an experience lesson as wrong (restorable, never recalled)."""
        return correction.review_lesson(self, namespace, memory_id, confirm=False)

    def _transition(
        self,
        namespace: str,
        ids: Sequence[str],
        op: str,
        change: Callable[[MemoryRecord, float], MemoryRecord],
    ) -> list[MemoryRecord]:
        check_namespace(namespace)
        with (
            telemetry.memory_span(
                f"hindsight.{op}",
                telemetry.UPDATE_MEMORY,
                namespace=namespace,
                memory_ids=list(ids),
            ),
            self._locked(namespace),
        ):
            records = self.backend.get(namespace, list(ids), vectors=True)
            now = self.clock()
            changed = [change(r, now) for r in records]
            if changed:
                self._save(namespace, changed, op)
            return changed

    def decay(
        self,
        namespace: str | None = None,
        now: float | None = None,
        *,
        dry_run: bool = False,
    ) -> dict[str, int]:
        """Move weak memories to cold and weak, unimportant cold ones to archived.

        Args:
            namespace: one tenant, or every namespace when ``None``.
            now: the time to decay to (the engine clock by default).
            dry_run: count what would move, change nothing.

        Returns:
            Counts: ``checked`` memories, those that went (or would go)
            ``cold`` and ``archived``, and ``kept``: cold memories weak
            enough to archive that stay cold because they matter
            (:func:`~.strength.kept_from_archive`).
        """
        moved = {"cold": 0, "archived": 0, "kept": 0, "checked": 0}
        when = self.clock() if now is None else now
        for ns in [namespace] if namespace else self.backend.namespaces():
            with (
                telemetry.memory_span(
                    telemetry.DECAY, telemetry.UPDATE_MEMORY, namespace=ns
                ) as span,
                self._locked(ns),
            ):
                rows = self.backend.query(
                    ns,
                    Where(statuses=("active", "cold")),
                    limit=10**7,
                    vectors=not dry_run,
                )
                changed = self._decayed(rows, when, moved)
                moved["checked"] += len(rows)
                if changed and not dry_run:
                    self._save(ns, changed, "decay")
                span.set_attribute("hindsight.moved", len(changed))
                span.set_attribute("hindsight.dry_run", dry_run)
        return moved

    def _decayed(
        self, rows: Sequence[MemoryRecord], when: float, moved: dict[str, int]
    ) -> list[MemoryRecord]:
        """The rows whose status decay changes (changed in place), counted."""
        changed = []
        for r in rows:
            target = lifecycle.decay_status(r, self.policy, when)
            if target is not None:
                r.status, r.version = target, r.version + 1
                moved[target.value] += 1
                changed.append(r)
            elif r.status is Status.COLD and r.strength < self.policy.archive_threshold:
                moved["kept"] += 1
        return changed

    def consolidate(
        self,
        namespace: str,
        *,
        params: ClusterParams | None = None,
        progress: Progress | None = None,
    ) -> list[MemoryRecord]:
        """Cluster active episodes into semantic memories; episodes go cold.

        Safe to run twice: consolidated episodes are cold and are not clustered
        again. Crash-safe: a run a kill interrupted is finished by the next
        one before it clusters (see :mod:`._journal`). Returns the semantic
        memories written.
        """
        check_namespace(namespace)
        p = params or ClusterParams()
        with (
            telemetry.memory_span(
                telemetry.CONSOLIDATE, telemetry.CREATE_MEMORY, namespace=namespace
            ) as span,
            self._locked(namespace),
            self.backend.exclusive(namespace, "consolidate"),
        ):
            unfinished = journal.pending(self.backend, namespace)
            journal.finish(self.backend, namespace, unfinished, self.clock())
            episodes = [
                r
                for r in self.backend.query(
                    namespace,
                    Where(statuses=("active",), tiers=("episodic",)),
                    limit=10**7,
                    vectors=True,
                )
                if r.kind is not Kind.QUERY
            ]
            groups = cluster(episodes, p)
            written = []
            for i, group in enumerate(groups, 1):
                written.append(self._consolidate_group(namespace, group))
                if progress:
                    progress(i, len(groups))
            self.backend.flush()  # the summaries (the journal) before the episodes
            journal.finish(self.backend, namespace, written, self.clock())
            for record in written:
                record.meta.pop(journal.PENDING, None)
            span.set_attribute("hindsight.finished", len(unfinished))
            span.set_attribute("hindsight.episodes", len(episodes))
            span.set_attribute("hindsight.clusters", len(groups))
            return written

    def _consolidate_group(
        self, namespace: str, members: list[MemoryRecord]
    ) -> MemoryRecord:
        now = self.clock()
        text, dense = self._summarise(members)
        record = semantic_record(members, text, now)
        record.meta[journal.PENDING] = True  # until its episodes are cold
        record.dense = dense
        self.backend.upsert(namespace, [record])
        # Ids, not the text: the record holds it, and forgetting rewrites it.
        detail = {"derived_from": [m.id for m in members]}
        self.backend.append_audit(
            namespace, [AuditEntry(namespace, record.id, "consolidate", now, detail)]
        )
        self.backend.add_edges(
            namespace,
            [
                Edge(namespace, record.id, m.id, EdgeType.DERIVED_FROM, 0.8, now)
                for m in members
            ]
            + [
                Edge(namespace, record.id, entity_id(e), EdgeType.MENTIONS, 1.0, now)
                for e in record.entities
            ],
        )
        return record

    def _summarise(self, members: Sequence[MemoryRecord]) -> tuple[str, list[float]]:
        """A consolidated memory's text for ``members``, and its vector."""
        text = (
            llm_summary(self.llm, members) if self.llm is not None else None
        ) or extractive_summary(members)
        return text, embed_records(self.embedder, [text])[0]

    def forget(
        self,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        thread_id: str | None = None,
    ) -> int:
        """Delete memories for real; see :meth:`HindsightMemory.forget`.

        On a server, under the namespace's forget lease, which a capture's
        supersede holds too: no other process writes a memory forgotten here
        back as history (:meth:`~hindsight_lg.memory.capture.Writer.batch`).
        """
        check_namespace(namespace)
        with (
            telemetry.memory_span(
                telemetry.FORGET, telemetry.DELETE_MEMORY, namespace=namespace
            ) as span,
            self._locked(namespace),
            self.backend.exclusive(namespace, FORGET_LEASE),
        ):
            # The writer's memo of each thread's last turn may hold what goes.
            self._writer.forget_turns(namespace)
            n = forget_memories(
                self.backend,
                namespace,
                ids,
                thread_id,
                summarise=self._summarise,
                now=self.clock(),
            )
            span.set_attribute("hindsight.count", n)
            return n
