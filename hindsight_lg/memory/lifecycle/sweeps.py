"""Passes over whole namespaces: decay and consolidation, with their I/O.

:class:`~.ops.Lifecycle` hands ``decay`` and ``consolidate`` here; the maths
they apply is in :mod:`.strength` (when a memory goes cold or is archived)
and :mod:`.consolidate` (clusters and their summaries). Each pass holds the
namespace (``Lifecycle.locked``) while it reads and writes it; consolidation
also holds the store's ``consolidate`` lease and journals its work
(:mod:`._journal`) so a run a kill interrupted is finished by the next.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hindsight_lg import telemetry
from hindsight_lg.backends.base import Where, check_namespace
from hindsight_lg.memory.capture.vectors import embed_records
from hindsight_lg.memory.lifecycle import _journal as journal
from hindsight_lg.memory.lifecycle import strength
from hindsight_lg.memory.lifecycle.consolidate import (
    ClusterParams,
    cluster,
    extractive_summary,
    llm_summary,
    semantic_record,
)
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    Status,
    entity_id,
)

if TYPE_CHECKING:
    from hindsight_lg.memory.lifecycle.ops import Lifecycle, Progress
    from hindsight_lg.memory.policy import Policy


def decay(
    life: Lifecycle, namespace: str | None, now: float | None, *, dry_run: bool
) -> dict[str, int]:
    """Move weak memories cold and archive weak cold ones; see ``Lifecycle.decay``."""
    moved = {"cold": 0, "archived": 0, "kept": 0, "checked": 0}
    when = life.clock() if now is None else now
    for ns in [namespace] if namespace else life.backend.namespaces():
        with (
            telemetry.memory_span(
                telemetry.DECAY, telemetry.UPDATE_MEMORY, namespace=ns
            ) as span,
            life.locked(ns),
        ):
            rows = life.backend.query(
                ns,
                Where(statuses=("active", "cold")),
                limit=10**7,
                vectors=not dry_run,
            )
            changed = _decayed(rows, life.policy, when, moved)
            moved["checked"] += len(rows)
            if changed and not dry_run:
                life.save(ns, changed, "decay")
            span.set_attribute("hindsight.moved", len(changed))
            span.set_attribute("hindsight.dry_run", dry_run)
    return moved


def _decayed(
    rows: Sequence[MemoryRecord], policy: Policy, when: float, moved: dict[str, int]
) -> list[MemoryRecord]:
    """The rows whose status decay changes (changed in place), counted."""
    changed = []
    for r in rows:
        target = strength.decay_status(r, policy, when)
        if target is not None:
            r.status, r.version = target, r.version + 1
            moved[target.value] += 1
            changed.append(r)
        elif r.status is Status.COLD and r.strength < policy.archive_threshold:
            moved["kept"] += 1
    return changed


def consolidate(
    life: Lifecycle,
    namespace: str,
    params: ClusterParams,
    progress: Progress | None,
) -> list[MemoryRecord]:
    """Cluster active episodes into semantic memories; see ``Lifecycle.consolidate``."""
    check_namespace(namespace)
    backend = life.backend
    with (
        telemetry.memory_span(
            telemetry.CONSOLIDATE, telemetry.CREATE_MEMORY, namespace=namespace
        ) as span,
        life.locked(namespace),
        backend.exclusive(namespace, "consolidate"),
    ):
        unfinished = journal.pending(backend, namespace)
        journal.finish(backend, namespace, unfinished, life.clock())
        episodes = [
            r
            for r in backend.query(
                namespace,
                Where(statuses=("active",), tiers=("episodic",)),
                limit=10**7,
                vectors=True,
            )
            if r.kind is not Kind.QUERY
        ]
        groups = cluster(episodes, params)
        written = []
        for i, group in enumerate(groups, 1):
            written.append(_consolidate_group(life, namespace, group))
            if progress:
                progress(i, len(groups))
        backend.flush()  # the summaries (the journal) before the episodes
        journal.finish(backend, namespace, written, life.clock())
        for record in written:
            record.meta.pop(journal.PENDING, None)
        span.set_attribute("hindsight.finished", len(unfinished))
        span.set_attribute("hindsight.episodes", len(episodes))
        span.set_attribute("hindsight.clusters", len(groups))
        return written


def _consolidate_group(
    life: Lifecycle, namespace: str, members: list[MemoryRecord]
) -> MemoryRecord:
    now = life.clock()
    text, dense = summarise(life, members)
    record = semantic_record(members, text, now)
    record.meta[journal.PENDING] = True  # until its episodes are cold
    record.dense = dense
    life.backend.upsert(namespace, [record])
    # Ids, not the text: the record holds it, and forgetting rewrites it.
    detail = {"derived_from": [m.id for m in members]}
    life.backend.append_audit(
        namespace, [AuditEntry(namespace, record.id, "consolidate", now, detail)]
    )
    life.backend.add_edges(
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


def summarise(
    life: Lifecycle, members: Sequence[MemoryRecord]
) -> tuple[str, list[float]]:
    """A consolidated memory's text for ``members``, and its vector."""
    text = (
        llm_summary(life.llm, members) if life.llm is not None else None
    ) or extractive_summary(members)
    return text, embed_records(life.embedder, [text])[0]
