"""Right to be forgotten, verified: records, edges, audit content and spooled captures.

:meth:`HindsightMemory.forget` deletes records, their edges and the audit trail;
:func:`forget_namespace` also clears captures still waiting in the spool and
then counts what is left, so ``hindsight-lg forget --verify`` can show zeros.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from hindsight_lg.memory.portability import all_records, edges_of
from hindsight_lg.store.base import check_namespace


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


class _Spool(Protocol):
    def purge(self, namespace: str) -> int: ...

    def pending(self, namespace: str | None = None) -> list[Any]: ...


def count_left(
    memory: Any,
    namespace: str,
    *,
    ids: Iterable[str] = (),
    spool: _Spool | None = None,
) -> dict[str, int]:
    """What a namespace still holds: records, edges, audit entries, spooled captures.

    Args:
        memory: the memory to inspect.
        namespace: the tenant.
        ids: memory ids to check for edges beyond the current records (e.g.
            those that existed before a forget).
        spool: the capture spool, if one is used.

    Returns:
        Counts by kind; all zero means nothing of the namespace is left.
    """
    check_namespace(namespace)
    current = [r.id for r in all_records(memory, namespace, False)]
    every = list(dict.fromkeys([*current, *ids]))
    return {
        "records": len(current),
        "edges": len(edges_of(memory, namespace, every)),
        "audit": len(memory.backend.audit(namespace)),
        "spooled": len(spool.pending(namespace)) if spool is not None else 0,
    }


def forget_namespace(
    memory: Any, namespace: str, *, spool: _Spool | None = None, verify: bool = True
) -> ForgetReport:
    """Right to be forgotten: delete a namespace's records, edges, audit, spool.

    Args:
        memory: a :class:`~hindsight_lg.HindsightMemory`.
        namespace: the tenant to erase.
        spool: the capture spool, whose pending captures of the tenant go too.
        verify: count what is left afterwards (``report.left``, all zero).

    Returns:
        What was removed and what is left.
    """
    ids = [r.id for r in all_records(memory, namespace, False)]
    report = ForgetReport(namespace)
    report.removed["spooled"] = spool.purge(namespace) if spool is not None else 0
    report.removed["audit"] = len(memory.backend.audit(namespace))
    report.removed["records"] = memory.forget(namespace)
    if verify:
        report.left = count_left(memory, namespace, ids=ids, spool=spool)
    return report
