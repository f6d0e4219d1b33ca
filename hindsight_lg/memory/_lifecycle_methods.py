"""The engine's lifecycle methods: update, remember, reinforce, correct, forget...

Each one hands its call to the engine's :class:`Lifecycle` (compare-and-swap
updates, reinforcement, lessons, decay, consolidation, deletion), read as
``self._parts().lifecycle``. They sit in a base class of
:class:`~hindsight_lg.memory.engine.HindsightMemory` so the engine's module
holds what the engine itself does (construction, capture, closing); to a
caller they are the engine's own methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hindsight_lg.backends import check_namespace
from hindsight_lg.memory._opening import UsesParts
from hindsight_lg.memory._twins import in_thread
from hindsight_lg.memory.lifecycle import (
    ClusterParams,
    Correction,
    CorrectionFactors,
    Lifecycle,
    Progress,
    Rollback,
    Selection,
)
from hindsight_lg.model import Kind, MemoryRecord, Scope, SourceKind, Tier


class LifecycleMethods(UsesParts):
    """What :class:`HindsightMemory` does through its :class:`Lifecycle`."""

    def _lifecycle(self) -> Lifecycle:
        return self._parts().lifecycle

    def update(
        self,
        /,
        namespace: str,
        memory_id: str,
        *,
        expected_version: int | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        """Change fields of a memory, with compare-and-swap on its version.

        See :meth:`Lifecycle.update <hindsight_lg.memory.lifecycle.Lifecycle.update>`.
        """
        return self._lifecycle().update(
            namespace, memory_id, expected_version=expected_version, **changes
        )

    aupdate = in_thread(update)

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

        See :meth:`Lifecycle.remember <hindsight_lg.memory.lifecycle.Lifecycle.remember>`.
        """
        return self._lifecycle().remember(
            content,
            namespace=namespace,
            kind=kind,
            importance=importance,
            confidence=confidence,
            agent_id=agent_id,
            scope=scope,
            meta=meta,
            source_ids=source_ids,
            entities=entities,
            tier=tier,
            source_kind=source_kind,
        )

    aremember = in_thread(remember)

    def put_record(
        self,
        record: MemoryRecord,
        *,
        op: str = "create",
        detail: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        """Store a record as given, replacing one with the same id.

        For adapters that build records themselves (``HindsightStore``): the
        write is embedded when ``record.dense`` is empty, locked, traced and
        audited like any other.
        """
        return self._lifecycle().put(record.namespace, record, op=op, detail=detail)

    def reinforce(self, namespace: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Mark memories as successfully used: stronger, longer-lived, more important."""
        return self._lifecycle().reinforce(namespace, ids)

    def weaken(
        self, namespace: str, ids: Sequence[str], factor: float = 0.5
    ) -> list[MemoryRecord]:
        """Mark memories as misleading: less important, less trusted, faster fading."""
        return self._lifecycle().weaken(namespace, ids, factor)

    def restore(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Bring a cold or archived memory back to active."""
        return self._lifecycle().restore(namespace, memory_id)

    arestore = in_thread(restore)

    def rollback(
        self,
        namespace: str,
        *,
        memory_id: str | None = None,
        thread_id: str | None = None,
        since: float | None = None,
        until: float | None = None,
        agent_id: str | None = None,
        dry_run: bool = False,
    ) -> Rollback:
        """Undo in one step what one memory, one thread or a time span wrote.

        What the selection's current memories superseded is current again;
        the selection's memories are archived (restorable); each change is a
        ``rollback`` audit entry. Name exactly one of ``memory_id``,
        ``thread_id`` or a span of write times (``since``/``until``, POSIX
        seconds, ``since`` included). With ``agent_id`` only memories that
        agent may see are rolled back or made current again. See
        :mod:`~hindsight_lg.memory.lifecycle.rollback`.

        Returns:
            The ids archived and made current again (``dry_run``: would be).

        Raises:
            ValueError: not exactly one selection, or ``since >= until``.
            KeyError: ``memory_id`` names no memory of ``namespace``.

        Example:
            >>> from hindsight_lg import HindsightMemory
            >>> memory = HindsightMemory.from_uri(":memory:", embedder="hashing")
            >>> _ = memory.capture("I live in Paris.", namespace="u1")
            >>> (berlin,) = memory.capture("I moved to Berlin.", namespace="u1")
            >>> undone = memory.rollback("u1", memory_id=berlin.id)
            >>> [r.content for r in memory.list_memories("u1")]
            ['I live in Paris.']
        """
        selection = Selection(memory_id, thread_id, since, until, agent_id)
        return self._lifecycle().rollback(namespace, selection, dry_run=dry_run)

    arollback = in_thread(rollback)

    def correct(
        self,
        namespace: str,
        memory_id: str,
        text: str,
        *,
        factors: CorrectionFactors | None = None,
    ) -> Correction:
        """Replace a memory by a person's correction, keeping the old one as history.

        The text becomes a new user-confirmed memory that supersedes the old
        one (``supersedes`` edge), with raised importance; memories on the same
        topic lose a little importance (bounded: see
        :class:`~hindsight_lg.memory.lifecycle.CorrectionFactors`). Every change
        is a compare-and-swap that re-reads and retries on a concurrent write.

        Args:
            namespace: the tenant.
            memory_id: the memory that is wrong.
            text: what is true instead.
            factors: the correction's bounded factors (defaults documented).

        Returns:
            A :class:`~hindsight_lg.memory.lifecycle.Correction`.

        Raises:
            KeyError: no such memory.
            ValueError: empty text, or the memory is already superseded.
        """
        return self._lifecycle().correct(namespace, memory_id, text, factors)

    acorrect = in_thread(correct)

    def confirm_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Verify an unconfirmed experience lesson: it joins ordinary recall."""
        return self._lifecycle().confirm_lesson(namespace, memory_id)

    aconfirm_lesson = in_thread(confirm_lesson)

    def reject_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Archive an experience lesson as wrong; it is never recalled."""
        return self._lifecycle().reject_lesson(namespace, memory_id)

    areject_lesson = in_thread(reject_lesson)

    def decay(
        self,
        namespace: str | None = None,
        now: float | None = None,
        *,
        dry_run: bool = False,
    ) -> dict[str, int]:
        """Move weak memories to cold and weak, unimportant cold ones to archived.

        ``dry_run`` counts without changing anything. See
        :meth:`Lifecycle.decay <hindsight_lg.memory.lifecycle.Lifecycle.decay>`.
        """
        return self._lifecycle().decay(namespace, now, dry_run=dry_run)

    def consolidate(
        self,
        namespace: str,
        *,
        params: ClusterParams | None = None,
        progress: Progress | None = None,
    ) -> list[MemoryRecord]:
        """Cluster active episodes into semantic memories; episodes go cold."""
        return self._lifecycle().consolidate(
            namespace, params=params, progress=progress
        )

    aconsolidate = in_thread(consolidate)

    def forget(
        self,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        thread_id: str | None = None,
    ) -> int:
        """Delete memories for real, with their edges and audit content.

        Forgetting a namespace or a thread also cancels its captures still
        queued for the background worker or waiting in the spool (the
        spool file is rewritten without them), removes edges of entity nodes
        only the forgotten memories used, and, for a thread, the audit
        entries of its turns that were not promoted to memories.

        Args:
            namespace: the tenant.
            ids: memories to delete; ``None`` with no ``thread_id`` deletes the
                whole namespace (right to be forgotten).
            thread_id: delete the memories captured from this thread.

        Returns:
            How many memories were deleted.
        """
        check_namespace(namespace)
        parts = self._parts()
        with parts.locks.namespace(namespace):  # no capture of it runs meanwhile
            if ids is None:
                parts.cancel_captures(namespace, thread_id)
            return parts.lifecycle.forget(namespace, ids, thread_id=thread_id)

    aforget = in_thread(forget)
