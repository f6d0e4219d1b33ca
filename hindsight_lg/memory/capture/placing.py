"""Where a capture's records go: merged, superseding, or new; then edges and audit.

The second half of the write path (:class:`~.writer.Writer` is the first:
a turn becomes events and vectors). For each new record :class:`Placer`
finds the stored memories it may repeat or contradict (:mod:`.conflicts`),
then merges it into one, lets it supersede stale ones (kept as history), or
inserts it; it links the capture's records to each other, to their entities
and to the thread's previous capture, and writes an audit entry for each.

Every write of a capture is buffered by :meth:`Placer.batch` in the staging
view its :class:`Batching` gives (the wiring hands it durability's
:class:`~hindsight_lg.memory.durability.batches.Batches`), and sent at the end
in one round per collection, or with group commit handed to the shared stage,
which writes it later.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from typing import Any, Protocol

from hindsight_lg import telemetry
from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.memory.capture.conflicts import (
    ForgetLeases,
    Judge,
    Resolution,
    absorb,
    candidates,
    heuristic_judge,
    mergeable,
    resolve,
    retire,
)
from hindsight_lg.memory.capture.merges import merge_detail, thread_marker
from hindsight_lg.memory.capture.replays import replayed
from hindsight_lg.memory.policy import Policy
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    MemoryRecord,
    entity_id,
)


class Batching(Protocol):
    """Where one capture's writes are staged, and sent when its block ends.

    ``batch`` gives a backend view whose reads see the writes staged so far;
    a block that raises writes nothing.
    """

    def batch(
        self, namespace: str, capture_id: str | None
    ) -> AbstractContextManager[MemoryBackend]: ...


class Placer:
    """Places one engine's captured records in the store (see module).

    Args:
        backend: the store (the engine's traced view of it).
        batches: where a capture's writes are staged and sent (with group
            commit, a spooled capture's go to its stage, not the store).
        policy: merge and conflict thresholds.
        judge: decides changes of mind; the heuristic judge by default.
    """

    def __init__(
        self,
        backend: MemoryBackend,
        batches: Batching,
        policy: Policy,
        judge: Judge | None = None,
    ) -> None:
        self._base = backend
        self.batches = batches
        self.policy = policy
        self.judge = judge or heuristic_judge
        self._last_in_thread: dict[tuple[str, str], str] = {}
        # Captures of different namespaces run at once: each thread's batch
        # has its own staging view.
        self._local = threading.local()

    @property
    def backend(self) -> MemoryBackend:
        """The store, or this thread's staging view of it inside :meth:`batch`."""
        staged: MemoryBackend | None = getattr(self._local, "staged", None)
        return staged if staged is not None else self._base

    @contextmanager
    def batch(
        self, namespace: str = "", capture_id: str | None = None
    ) -> Iterator[None]:
        """Buffer the block's writes; send them in one round per collection at exit.

        Nothing is written when the block raises. After the writes the store
        is flushed: Milvus Lite keeps unflushed rows in memory and loses them
        to a crash, and a capture that returned must survive one. (On a
        Milvus server, flush is free: acknowledged writes are already logged.)
        With group commit and a spooled ``capture_id``, the writes go to its
        stage instead, and its committer writes and flushes them later
        (:attr:`batches`). A supersede's forget lease (:meth:`_supersede`) is
        held until the writes are sent: the stack releases it last.
        """
        with ExitStack() as stack:
            leases = ForgetLeases(self._base, stack)
            with self.batches.batch(namespace, capture_id) as staged:
                self._local.staged, self._local.leases = staged, leases
                try:
                    yield
                finally:
                    self._local.staged = self._local.leases = None

    def write(
        self,
        namespace: str,
        records: list[MemoryRecord],
        extraction_causes: list[tuple[int, int]],
        now: float,
    ) -> list[MemoryRecord]:
        """Merge, supersede or insert each record; add edges and audit entries."""
        written: list[MemoryRecord] = []
        edges: list[Edge] = []
        audit: list[AuditEntry] = []
        for record in records:
            result, new_edges, entry = self._place(namespace, record, now)
            written.append(result)
            edges += new_edges
            audit.append(entry)
        edges += self._turn_edges(namespace, written, extraction_causes, now)
        self.backend.add_edges(namespace, edges)
        self.backend.append_audit(namespace, audit)
        return written

    def _place(
        self, namespace: str, record: MemoryRecord, now: float
    ) -> tuple[MemoryRecord, list[Edge], AuditEntry]:
        if (original := replayed(self.backend, record)) is not None:
            detail = {"replay_of": original.id, "source_ids": record.source_ids}
            return (
                original,
                [],
                AuditEntry(namespace, original.id, "replay", now, detail),
            )
        hits = candidates(self.backend, record, self.policy.conflict_candidates)
        found = resolve(record, hits, self.judge)
        if found.superseded:
            return self._supersede(namespace, record, found, now)
        merge_into = found.reinforced
        if merge_into is not None and not self._mergeable(merge_into):
            merge_into = None
        for hit in hits:
            if merge_into is None and (
                hit.score >= self.policy.merge_threshold
                and hit.record.kind == record.kind
                and hit.record.id not in found.kept_apart
                and self._mergeable(hit.record)
            ):
                merge_into = hit.record
        if merge_into is not None:
            with telemetry.memory_span(
                telemetry.MERGE,
                telemetry.UPDATE_MEMORY,
                memory_id=merge_into.id,
                merged_content=record.content[:500],
            ):
                telemetry.collect("merged_ids", merge_into.id)
                return self._merge(namespace, record, merge_into.id, now)
        return self._create(namespace, record, now)

    def _create(
        self, namespace: str, record: MemoryRecord, now: float
    ) -> tuple[MemoryRecord, list[Edge], AuditEntry]:
        telemetry.collect("created_ids", record.id)
        self.backend.upsert(namespace, [record])
        mentions = [
            Edge(namespace, record.id, entity_id(e), EdgeType.MENTIONS, 1.0, now)
            for e in record.entities
        ]
        detail = {"content": record.content, "source_ids": record.source_ids}
        entry = AuditEntry(namespace, record.id, "create", now, detail)
        return record, mentions, entry

    def _mergeable(self, record: MemoryRecord) -> bool:
        return mergeable(record, self.policy.cold_threshold)

    def _supersede(
        self, namespace: str, new: MemoryRecord, found: Resolution, now: float
    ) -> tuple[MemoryRecord, list[Edge], AuditEntry]:
        """``new`` replaces the memories judged stale; they stay as history.

        A statement older than what it contradicts (a replayed or imported
        turn with its original time) does not win: it is stored already
        superseded by the newer memory, so the current version stays current.

        The stale memories are read again under the forget lease: one another
        process forgot since the search is not written back (with its words)
        as history; with none left, ``new`` is simply created.
        """
        leases: ForgetLeases | None = getattr(self._local, "leases", None)
        if leases is not None:  # set by batch(), where every capture runs
            leases.hold(namespace)
        wanted = [o.id for o in found.superseded]
        olds = self.backend.get(namespace, wanted, vectors=True)
        if not olds:
            return self._create(namespace, new, now)
        there = {o.id for o in olds}
        ids = [i for i in wanted if i in there]
        newer = [o for o in olds if o.event_time > new.event_time]
        current, stale = (newer[0], [new]) if newer else (new, olds)
        importance = self.policy.superseded_importance
        for old in stale:
            with telemetry.memory_span(
                telemetry.SUPERSEDE,
                telemetry.UPDATE_MEMORY,
                memory_id=current.id,
                superseded_id=old.id,
                superseded_content=old.content[:500],
                decision=found.decision.value,
            ):
                telemetry.collect("superseded_ids", old.id)
            retire(old, current.id, importance)
        self.backend.upsert(namespace, [new, *olds] if not newer else [new])
        edges = [
            Edge(namespace, current.id, o.id, EdgeType.SUPERSEDES, 1.0, now)
            for o in stale
        ]
        edges += [
            Edge(namespace, new.id, entity_id(e), EdgeType.MENTIONS, 1.0, now)
            for e in new.entities
        ]
        detail: dict[str, Any] = {
            "content": new.content,
            "decision": found.decision.value,
            "source_ids": new.source_ids,
        }
        if newer:
            detail["superseded_by"] = current.id
        else:
            detail.update(supersedes=ids[0], superseded=ids)
        return new, edges, AuditEntry(namespace, new.id, "supersede", now, detail)

    def _merge(
        self, namespace: str, new: MemoryRecord, old_id: str, now: float
    ) -> tuple[MemoryRecord, list[Edge], AuditEntry]:
        old = self.backend.get(namespace, [old_id], vectors=True)[0]
        woken = absorb(old, new, now)
        old.version += 1
        self.backend.upsert(namespace, [old])
        # Ids, not the restatement's text; the thread's key finds ``old``
        # when that thread is forgotten.
        self.backend.append_audit(namespace, thread_marker(old, new, now))
        detail = merge_detail(new, woken)
        return old, [], AuditEntry(namespace, old.id, "merge", now, detail)

    def _turn_edges(
        self,
        namespace: str,
        written: list[MemoryRecord],
        causes: list[tuple[int, int]],
        now: float,
    ) -> list[Edge]:
        edges = [
            Edge(namespace, written[i].id, written[j].id, EdgeType.CAUSES, 0.9, now)
            for i, j in causes
            if i < len(written) and j < len(written) and written[i].id != written[j].id
        ]
        for a, b in zip(written, written[1:], strict=False):
            if a.id != b.id:
                edges.append(Edge(namespace, a.id, b.id, EdgeType.PRECEDES, 0.6, now))
        if written and written[0].thread_id:
            key = (namespace, written[0].thread_id)
            prev = self._last_in_thread.get(key)
            if prev and prev != written[0].id:
                edges.append(
                    Edge(namespace, prev, written[0].id, EdgeType.PRECEDES, 0.4, now)
                )
            self._last_in_thread[key] = written[-1].id
        return edges
