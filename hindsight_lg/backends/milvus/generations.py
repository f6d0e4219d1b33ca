"""Copy a Milvus store into a new generation of collections, then switch to it.

Every record, edge and audit entry is copied into collections under a new
prefix (``<prefix>_r<n>``), records re-vectored by a callback the caller
gives. Only when every namespace's count matches is the pointer row in
``<prefix>_meta`` switched: processes that open the store afterwards use the
new collections. The old collections stay, for rollback, until dropped by hand.

Guarantees:

- **Nothing switches early.** Until the pointer row is written (one upsert),
  every reader sees the old collections.
- **A failure cleans up.** An error during the copy drops the new
  collections and re-raises: the store is as it was, and the next run starts
  afresh.
- **A kill resumes.** A run killed (or interrupted with Ctrl-C) leaves its
  new collections and, in their meta collection, the namespaces it finished.
  The next run to the same model skips those and copies the rest; a run to
  another model drops the leftovers first. Records and edges are upserts by
  key, and a namespace's audit rows are cleared before it is copied again, so
  a namespace half-copied when the process died ends up copied once.

Cost: one read of the old store and one write of the new, namespace by
namespace; memory holds one namespace's records at a time.

This module knows Milvus and nothing of embeddings: the engine's
:func:`hindsight_lg.memory.jobs.reembed.reembed` supplies the vectors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hindsight_lg.backends.base import CopyReport, Where
from hindsight_lg.backends.milvus._expr import lit
from hindsight_lg.backends.milvus.backend import MilvusBackend
from hindsight_lg.errors import EmbeddingMismatch
from hindsight_lg.model import MemoryRecord

_ALL = Where(statuses=())  # every status: history and deleted markers included
_BATCH = 256
_KINDS = ("memories", "edges", "audit", "meta")
_PROGRESS = "reembed_progress"  # meta row of the new generation: namespaces done

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
    revector: Revector | None,
    token: str = "",
    prefix: str = "hindsight",
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy the store at ``uri`` into new collections, re-vectored, then switch.

    Args:
        uri: the Milvus Lite file or server the store lives in.
        dim: the new vectors' dimension.
        model_id: the new embedding model's id, recorded in the new collections.
        revector: sets ``dense`` on each record of a batch, in place; ``None``
            copies the stored vectors unchanged (a migration to the current
            schema, e.g. tenancy partitions, with the same model).
        token: server credentials.
        prefix: the store's collection prefix (as given to ``from_uri``).
        progress: called with (namespaces done, namespaces) after each one.

    Returns:
        What was copied; ``namespaces`` lists every namespace of the store,
        those a killed run had finished included.

    Raises:
        ValueError: no store under ``prefix`` at ``uri``.
        RuntimeError: a copied namespace's count differs (nothing switched,
            the new collections dropped).
        StoreError: the store failed (nothing switched, new collections dropped).
    """
    old = MilvusBackend.from_uri(uri, token=token, prefix=prefix)
    try:
        _open_source(old)
        target = next_prefix(prefix, old.active_prefix)
        new: MilvusBackend | None = None
        try:
            new = _open_target(old, token, target, dim, model_id)
            report = _copy_all(old, new, revector, progress)
            new.close()  # flushes: every row durable before the switch
        except Exception:
            if new is not None:
                _close_quietly(new)
            _drop(old, target)
            raise
        old.switch_to(target)
        return report
    finally:
        old.close()


def migrate_generation(
    uri: str,
    *,
    token: str = "",
    prefix: str = "hindsight",
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy the store into collections of the current schema, vectors unchanged.

    What a store made before tenancy partitions needs to get them on a
    server (see ``MilvusBackend.partitioned``): same model, same vectors,
    new collections, one switch.

    Raises:
        ValueError: no store under ``prefix`` at ``uri``, or it has no model yet.
    """
    probe = MilvusBackend.from_uri(uri, token=token, prefix=prefix)
    try:
        _open_source(probe)
        model = probe.stored_model()
    finally:
        probe.close()
    if model is None:
        raise ValueError(f"the store at {uri} records no embedding model yet")
    model_id, dim = model
    return copy_generation(
        uri,
        dim=dim,
        model_id=model_id,
        revector=None,
        token=token,
        prefix=prefix,
        progress=progress,
    )


def _open_source(old: MilvusBackend) -> None:
    """Follow the pointer and load the collections in use (a fresh process
    finds them released: Milvus keeps collections unloaded until asked)."""
    old.active_prefix = old.read_pointer()
    if not old._has(old.memories):
        raise ValueError(
            f"no hindsight store under prefix {old.prefix!r} at {old.uri}: "
            "check --uri and --prefix"
        )
    for kind in _KINDS:
        if old._has(old._name(kind)):
            old._load(old._name(kind))


def _open_target(
    old: MilvusBackend, token: str, target: str, dim: int, model_id: str
) -> MilvusBackend:
    """The new generation's backend, created, or reopened to resume."""
    new = MilvusBackend.from_uri(old.uri, token=token, prefix=target)
    try:
        new.setup(dim=dim, model_id=model_id)
        return new
    except EmbeddingMismatch:
        # Leftovers of a killed run to another model: start over.
        _close_quietly(new)
    _drop(old, target)
    new = MilvusBackend.from_uri(old.uri, token=token, prefix=target)
    new.setup(dim=dim, model_id=model_id)
    return new


def _copy_all(
    old: MilvusBackend,
    new: MilvusBackend,
    revector: Revector | None,
    progress: Callable[[int, int], None] | None,
) -> CopyReport:
    done = _done(new, old.active_prefix)
    report = CopyReport(old.active_prefix, new.active_prefix)
    namespaces = old.namespaces()
    for i, namespace in enumerate(namespaces, 1):
        if namespace in done:
            _count_copied(new, namespace, report)
        else:
            new.purge_audit(namespace)  # a killed run may have inserted some
            _copy(old, new, namespace, revector, report)
            done.append(namespace)
            new._put_meta(_PROGRESS, {"source": old.active_prefix, "done": done})
        if progress:
            progress(i, len(namespaces))
    return report


def _done(new: MilvusBackend, source: str) -> list[str]:
    """Namespaces a killed run finished copying from ``source``."""
    rows = new._call(
        "reading meta",
        new._client.query,
        new._name("meta"),
        filter=f"pk == {lit(_PROGRESS)}",
        output_fields=["doc"],
    )
    doc: dict[str, Any] = rows[0]["doc"] if rows else {}
    return list(doc.get("done", [])) if doc.get("source") == source else []


def _copy(
    old: MilvusBackend,
    new: MilvusBackend,
    namespace: str,
    revector: Revector | None,
    report: CopyReport,
) -> None:
    keep = revector is None
    records = old.query(namespace, _ALL, limit=10**7, vectors=keep)
    for start in range(0, len(records), _BATCH):
        batch = records[start : start + _BATCH]
        if revector is not None:
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


def _count_copied(new: MilvusBackend, namespace: str, report: CopyReport) -> None:
    report.records += new.count(namespace, _ALL)
    report.edges += len(new.all_edges(namespace))
    report.audit += len(new.audit(namespace))
    report.namespaces.append(namespace)


def _drop(via: MilvusBackend, prefix: str) -> None:
    """Drop every collection of generation ``prefix`` (best effort)."""
    for kind in _KINDS:
        name = f"{prefix}_{kind}"
        try:
            if via._has(name):
                via._call("dropping", via._client.drop_collection, name)
        except Exception:  # cleanup must not hide the error that caused it
            continue


def _close_quietly(backend: MilvusBackend) -> None:
    try:
        backend.close()
    except Exception:  # closing after a failure: the failure is what matters
        return
