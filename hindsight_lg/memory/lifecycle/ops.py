"""Lifecycle operations: update, remember, reinforce, decay, consolidate, forget.

:class:`Lifecycle` is a collaborator of
:class:`~hindsight_lg.memory.engine.HindsightMemory`, like its writer and
searcher; it holds the I/O, while :mod:`.strength` and :mod:`.consolidate`
hold the maths. The passes over whole namespaces (decay, consolidation) are
in :mod:`.sweeps`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from hindsight_lg import telemetry
from hindsight_lg.backends.base import check_labels, check_namespace, check_text
from hindsight_lg.memory._locks import FORGET_LEASE
from hindsight_lg.memory.capture.vectors import embed_records
from hindsight_lg.memory.lifecycle import correct as correction
from hindsight_lg.memory.lifecycle import ids, sweeps, updates
from hindsight_lg.memory.lifecycle import rollback as undoing
from hindsight_lg.memory.lifecycle import strength as lifecycle
from hindsight_lg.memory.lifecycle.consolidate import ClusterParams
from hindsight_lg.memory.lifecycle.correct import Correction, CorrectionFactors
from hindsight_lg.memory.lifecycle.forgetting import forget as forget_memories
from hindsight_lg.memory.lifecycle.reserved import check_meta
from hindsight_lg.memory.lifecycle.rollback import Rollback, Selection
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    Scope,
    SourceKind,
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
        before_write: with a capture spool, commits staged captures; called
            before each write (see :meth:`_locked`).
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
        before_write: Callable[[], None] | None = None,
    ) -> None:
        self.backend = backend
        self.embedder = embedder
        self.policy = policy
        self.llm = llm
        self.clock = clock
        self._write_lock = write_lock
        self._writer = writer
        self.before_write = before_write

    @contextmanager
    def locked(self, namespace: str) -> Iterator[None]:
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

    def save(
        self,
        namespace: str,
        records: Sequence[MemoryRecord],
        op: str,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Store ``records``, with an audit entry ``op`` each, and flush."""
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
        return updates.update(self, namespace, memory_id, expected_version, changes)

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
        curated knowledge. ``meta`` is the caller's, but for the keys the engine
        and ``HindsightStore`` read back (``store``, ``confirmations``,
        ``store_updated``, ``derived_from``: :mod:`.reserved`); a bad value
        there raises ``ValueError`` and nothing is written.
        """
        check_namespace(namespace)
        check_text(content, "content")
        if not content.strip():
            raise ValueError("content must be non-empty text")
        check_labels(entities, "entities")
        check_labels(source_ids or (), "source_ids")
        check_meta(meta or {})
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
            self.locked(namespace),
        ):
            self.save(
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
        full = self.resolve_id(namespace, memory_id)
        return self._transition(namespace, [full], "restore", lifecycle.restore)[0]

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
            self.locked(namespace),
            self.backend.exclusive(namespace, FORGET_LEASE),
        ):
            return undoing.apply(
                self.backend,
                namespace,
                selection,
                self.policy,
                self.clock(),
                dry_run=dry_run,
            )

    def resolve_id(
        self, namespace: str, memory_id: str, reader: str | None = None
    ) -> str:
        """The whole id of the memory named by its id or a unique prefix of it.

        See :mod:`.ids`: the operations on one memory accept the 8-character
        ids that listings print.

        Raises:
            KeyError: no such memory (also a ``ValueError``).
            ValueError: a prefix of several memories' ids.
        """
        return ids.resolve(self.backend, check_namespace(namespace), memory_id, reader)

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
            self.locked(namespace),
        ):
            records = self.backend.get(namespace, list(ids), vectors=True)
            now = self.clock()
            changed = [change(r, now) for r in records]
            if changed:
                self.save(namespace, changed, op)
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
        return sweeps.decay(self, namespace, now, dry_run=dry_run)

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
        return sweeps.consolidate(self, namespace, params or ClusterParams(), progress)

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
            self.locked(namespace),
            self.backend.exclusive(namespace, FORGET_LEASE),
        ):
            # The writer's memo of each thread's last turn may hold what goes.
            self._writer.forget_turns(namespace)
            n = forget_memories(
                self.backend,
                namespace,
                ids,
                thread_id,
                summarise=functools.partial(sweeps.summarise, self),
                now=self.clock(),
            )
            span.set_attribute("hindsight.count", n)
            return n
