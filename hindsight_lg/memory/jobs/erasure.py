"""Right to be forgotten, verified: records, edges, audit, queued and spooled captures.

:meth:`HindsightMemory.forget` cancels the tenant's (or thread's) captures
still queued or spooled, then deletes records, their edges (and edges of
entity nodes only the forgotten memories used) and the audit trail, and
takes their words out of what was derived from them
(:mod:`hindsight_lg.memory.lifecycle.forgetting`);
:func:`forget_namespace` then counts what is left, so ``hindsight-lg forget
--verify`` shows zeros only when nothing is left anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from hindsight_lg.backends.base import check_namespace
from hindsight_lg.memory.durability import Spool
from hindsight_lg.memory.jobs._engine import Engine
from hindsight_lg.memory.jobs.portability import all_records, edges_of
from hindsight_lg.memory.lifecycle.deletion import entity_nodes


@dataclass(slots=True)
class ForgetReport:
    """What ``forget`` removed and, after ``verify``, what is left (all zero)."""

    namespace: str
    removed: dict[str, int] = field(default_factory=dict)
    left: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        """True when verification found nothing left."""
        return not any(self.left.values())


def count_left(
    memory: Engine,
    namespace: str,
    *,
    ids: Iterable[str] = (),
    spool: Spool | None = None,
) -> dict[str, int]:
    """What a namespace still holds, everywhere a capture can be.

    Args:
        memory: the memory to inspect.
        namespace: the tenant.
        ids: memory ids to check for edges beyond the current records (e.g.
            those that existed before a forget).
        spool: the capture spool (the memory's own by default).

    Returns:
        Counts of ``records``, ``edges``, ``entity_nodes`` (entities some
        edge still points at), ``audit`` entries, ``queued`` captures (in the
        background worker) and ``spooled`` ones (pending or dead letters);
        all zero means nothing of the namespace is left.
    """
    check_namespace(namespace)
    spool = spool if spool is not None else memory.spool
    current = [r.id for r in all_records(memory, namespace, False)]
    every = list(dict.fromkeys([*current, *ids]))
    edges = {e.key: e for e in edges_of(memory, namespace, every)}
    edges.update({e.key: e for e in memory.backend.all_edges(namespace)})
    return {
        "records": len(current),
        "edges": len(edges),
        "entity_nodes": len(entity_nodes(edges.values())),
        "audit": len(memory.backend.audit(namespace)),
        "queued": memory.worker.pending_for(namespace),
        "spooled": _spooled(spool, namespace),
    }


def _spooled(spool: Spool | None, namespace: str) -> int:
    if spool is None:
        return 0
    dead = [e for e in spool.dead() if e.namespace == namespace]
    return len(spool.pending(namespace)) + len(dead)


def forget_namespace(
    memory: Engine, namespace: str, *, spool: Spool | None = None, verify: bool = True
) -> ForgetReport:
    """Right to be forgotten: delete a namespace's records, edges, audit, spool.

    Args:
        memory: a :class:`~hindsight_lg.HindsightMemory`.
        namespace: the tenant to erase.
        spool: another capture spool whose pending captures of the tenant go
            too (the memory's own spool is always purged).
        verify: count what is left afterwards (``report.left``, all zero).

    Returns:
        What was removed and what is left.
    """
    ids = [r.id for r in all_records(memory, namespace, False)]
    report = ForgetReport(namespace)
    if _same_file(spool, memory.spool):
        spool = None  # the memory's own spool, under another object: purged below
    before = count_left(memory, namespace, ids=ids)
    report.removed["spooled"] = spool.purge(namespace) if spool is not None else 0
    report.removed["records"] = memory.forget(namespace)
    for key in ("edges", "entity_nodes", "audit", "queued"):
        report.removed[key] = before[key]
    report.removed["spooled"] += before["spooled"]
    if verify:
        report.left = count_left(memory, namespace, ids=ids, spool=spool)
    return report


def _same_file(spool: Spool | None, own: Spool | None) -> bool:
    if spool is None or own is None:
        return False
    if spool is own:
        return True
    return Path(own.path).resolve() == Path(spool.path).resolve()
