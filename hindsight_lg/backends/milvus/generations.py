"""Copy a Milvus store into a new generation of collections, then switch to it.

Every record, edge and audit entry is copied into collections under a new
prefix (``<prefix>_r<n>``), records re-vectored by a callback the caller
gives. Only when every namespace's count matches is the pointer row in
``<prefix>_meta`` switched: processes that open the store afterwards use the
new collections; a failure before that leaves the store as it was. The old
collections stay, for rollback, until dropped by hand.

This module knows Milvus and nothing of embeddings: the engine's
:func:`hindsight_lg.memory.transfer.reembed.reembed` supplies the vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hindsight_lg.backends.base import CopyReport, Where
from hindsight_lg.backends.milvus.backend import MilvusBackend
from hindsight_lg.model import MemoryRecord

_ALL = Where(statuses=())  # every status: history and deleted markers included
_BATCH = 256

Revector = Callable[[Sequence[MemoryRecord]], None]


def next_prefix(base: str, active: str) -> str:
    """The prefix after ``active``: ``base_r2``, ``base_r3``, ..."""
    n = int(active.rsplit("_r", 1)[1]) if active != base else 1
    return f"{base}_r{n + 1}"


def copy_generation(
    uri: str,
    *,
    dim: int,
    model_id: str,
    revector: Revector,
    token: str = "",
    prefix: str = "hindsight",
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy the store at ``uri`` into new collections, re-vectored, then switch.

    Args:
        uri: the Milvus Lite file or server the store lives in.
        dim: the new vectors' dimension.
        model_id: the new embedding model's id, recorded in the new collections.
        revector: sets ``dense`` on each record of a batch, in place.
        token: server credentials.
        prefix: the store's collection prefix (as given to ``from_uri``).
        progress: called with (namespaces done, namespaces) after each one.

    Raises:
        RuntimeError: a copied namespace's count differs (nothing switched).
    """
    old = MilvusBackend(uri, token=token, prefix=prefix)
    try:
        old.active_prefix = old.read_pointer()
        new = MilvusBackend(
            uri, token=token, prefix=next_prefix(prefix, old.active_prefix)
        )
        try:
            new.setup(dim=dim, model_id=model_id)
            report = CopyReport(old.active_prefix, new.active_prefix)
            namespaces = old.namespaces()
            for i, namespace in enumerate(namespaces, 1):
                _copy(old, new, namespace, revector, report)
                if progress:
                    progress(i, len(namespaces))
            new.flush()
            old.switch_to(new.active_prefix)
            return report
        finally:
            new.close()
    finally:
        old.close()


def _copy(
    old: MilvusBackend,
    new: MilvusBackend,
    namespace: str,
    revector: Revector,
    report: CopyReport,
) -> None:
    records = old.query(namespace, _ALL, limit=10**7)
    for start in range(0, len(records), _BATCH):
        batch = records[start : start + _BATCH]
        revector(batch)
        new.upsert(namespace, batch)
    edges, audit = old.all_edges(namespace), old.audit(namespace)
    new.add_edges(namespace, edges)
    new.append_audit(namespace, audit)
    if new.count(namespace, _ALL) != len(records):
        raise RuntimeError(
            f"re-embed of {namespace!r} copied {new.count(namespace, _ALL)} of "
            f"{len(records)} records; the store still uses {old.active_prefix}"
        )
    report.records += len(records)
    report.edges += len(edges)
    report.audit += len(audit)
    report.namespaces.append(namespace)
