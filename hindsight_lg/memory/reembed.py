"""Re-embed a Milvus store with another embedding model and switch to it atomically.

Every record, edge and audit entry is copied into collections under a new
prefix (``<prefix>_r<n>``), records with vectors from the new embedder. Only
when every namespace's count matches is the pointer row in ``<prefix>_meta``
switched: processes that open the store afterwards use the new collections;
a failure before that leaves the store as it was. The old collections stay,
for rollback, until dropped by hand.

Stop writers while it runs: captures written to the old collections after a
namespace was copied are not in the new ones, and processes that already have
the store open keep using the old collections until they reopen it.

Example:
    >>> report = reembed("./hindsight.db", to=HashingEmbedder(128))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hindsight_lg.embeddings.base import Embedder
from hindsight_lg.memory.capture import context_vectors
from hindsight_lg.memory.policy import Policy
from hindsight_lg.store.base import Where
from hindsight_lg.store.milvus import MilvusBackend

_ALL = Where(statuses=())  # every status: history and deleted markers included
_BATCH = 256


@dataclass
class ReembedReport:
    """What a re-embed copied, and where the store now points."""

    old_prefix: str
    new_prefix: str
    records: int = 0
    edges: int = 0
    audit: int = 0
    namespaces: list[str] = field(default_factory=list)


def next_prefix(base: str, active: str) -> str:
    """The prefix after ``active``: ``base_r2``, ``base_r3``, ..."""
    n = int(active.rsplit("_r", 1)[1]) if active != base else 1
    return f"{base}_r{n + 1}"


def reembed(
    uri: str,
    *,
    to: Embedder,
    token: str = "",
    prefix: str = "hindsight",
    progress: Callable[[int, int], None] | None = None,
) -> ReembedReport:
    """Copy the store at ``uri`` into new collections embedded by ``to``, then switch.

    Args:
        uri: the Milvus Lite file or server the store lives in.
        to: the new embedder.
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
            new.setup(dim=to.dim, model_id=to.model_id)
            report = ReembedReport(old.active_prefix, new.active_prefix)
            namespaces = old.namespaces()
            for i, namespace in enumerate(namespaces, 1):
                _copy(old, new, namespace, to, report)
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
    embedder: Embedder,
    report: ReembedReport,
) -> None:
    records = old.query(namespace, _ALL, limit=10**7)
    for start in range(0, len(records), _BATCH):
        batch = records[start : start + _BATCH]
        vectors = context_vectors(embedder, batch, Policy().context_weight)
        for record, vector in zip(batch, vectors, strict=True):
            record.dense = vector
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
