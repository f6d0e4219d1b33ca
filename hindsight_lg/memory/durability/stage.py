"""The shared stage: captures' writes waiting for the group commit, per tenant.

A capture's writes (records, edges, audit entries) move here at once when it
finishes (:meth:`SharedStage.take`); the committer (:mod:`.commit`) writes
them to the store in rounds. Reads see what is staged first, so a capture
merges into a record the previous capture just wrote, and a record staged
is never shadowed by an older copy in the store.

A round can take the whole stage or one tenant's part of it
(:meth:`SharedStage.detach`), and what a round wrote leaves the stage tenant
by tenant (:meth:`SharedStage.settle`): a reader of one tenant waits for
that tenant's writes only, never for another tenant's backlog.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence

import numpy as np

from hindsight_lg.backends import combines_writes, local_dense_search
from hindsight_lg.backends.base import Hit, MemoryBackend, Where
from hindsight_lg.memory.durability.fanout import Fanout
from hindsight_lg.memory.durability.staging import Batch, StagedWrites
from hindsight_lg.model import MemoryRecord


class SharedStage(StagedWrites):
    """The captures' writes waiting for the committer, safe across threads.

    Records it committed stay readable with their vectors (``recent``, the
    last ``keep_recent``), so merging a new event into one just captured
    needs no store round trip. Every other in-process write reaches the store
    through :class:`~.commit.DrainingBackend`, which drops the records it writes from
    ``recent``: what it holds is never older than the store.
    """

    def __init__(self, inner: MemoryBackend, keep_recent: int = 10_000) -> None:
        super().__init__(inner)
        self.lock = threading.RLock()
        self.captures: list[tuple[str, str]] = []
        self.since = 0.0
        self.keep_recent = keep_recent
        self.failed: dict[str, Exception] = {}
        self._recent: OrderedDict[tuple[str, str], MemoryRecord] = OrderedDict()
        self.fanout = Fanout(lambda: combines_writes(inner))

    # Records go in and out as copies: a capture edits what it reads in
    # place, and its caller owns the records it returned.

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        with self.lock:
            super().upsert(namespace, [r.replace() for r in records])

    def get(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        with self.lock:
            staged = self._records.get(namespace, {})
            known: dict[str, MemoryRecord] = {}
            for i in ids:
                record = staged.get(i) or self._recent.get((namespace, i))
                if record is not None:
                    known[i] = record.replace()
            rest = [i for i in ids if i not in known]
            found = {r.id: r for r in self.inner.get(namespace, rest, vectors=vectors)}
        found.update(known)
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    def forget_recent(self, namespace: str, ids: Sequence[str] | None) -> None:
        """Drop records of ``namespace`` (all when ``ids`` is None) from ``recent``."""
        with self.lock:
            if ids is None:
                for key in [k for k in self._recent if k[0] == namespace]:
                    del self._recent[key]
            for i in ids or ():
                self._recent.pop((namespace, i), None)

    def search_dense(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        """Staged rows read under the lock; the store (maybe a tenant's load) outside.

        A record is in that snapshot or was settled, so written to the store,
        before the store is read: no other capture or settle waits for a load.
        """
        with self.lock:
            staged = set(self._records.get(namespace, {}))
            rows = self._stacked(namespace)
            vec = np.asarray(vector, dtype=np.float32)
            best = [] if rows is None else rows.best(vec, where, limit).values()
            mine = [Hit(h.record.replace(), h.score) for h in best]
        found = local_dense_search(
            self.inner, namespace, vector, where, limit=limit, vectors=vectors
        )
        mine += [
            Hit(h.record.replace(), h.score) for h in found if h.record.id not in staged
        ]
        return sorted(mine, key=lambda h: -h.score)[:limit]

    # Per-capture stages search their inner backend through this name.
    search_dense_local = search_dense

    def take(self, staged: StagedWrites, namespace: str, capture_id: str) -> None:
        """Move one capture's writes here and register it, atomically."""
        with self.lock:
            if not self.captures:
                self.since = time.monotonic()
            staged.commit()
            self.captures.append((namespace, capture_id))

    def commit(self) -> None:
        """Send the staged writes to the store, one namespace at a time.

        A namespace whose writes fail stays staged, its error in
        :attr:`failed`, and the other namespaces go on: one tenant's write
        the store refuses never holds back another's. Holds the lock
        throughout; :class:`~.commit.GroupCommit` writes without it
        (:meth:`detach`, :meth:`write`, :meth:`settle`).
        """
        with self.lock:
            batch = self.detach()
            self.write(batch)
            self.settle(batch)

    def holds(self, namespace: str | None = None) -> bool:
        """Whether anything of ``namespace`` (``None``: of anyone) waits here."""
        if namespace is None:
            return not self.empty
        return bool(
            self._records.get(namespace)
            or self._edges.get(namespace)
            or self._audit.get(namespace)
            or any(ns == namespace for ns, _ in self.captures)
        )

    def detach(self, namespace: str | None = None) -> Batch:
        """What is staged now, or of ``namespace`` only, to be written.

        Call with :attr:`lock` held. Records stay staged, and so readable,
        until :meth:`settle`: a capture staging meanwhile still merges into
        them. Edges and audit entries (which nothing reads back from the
        stage) leave it now.
        """

        def ours(ns: str) -> bool:
            return namespace is None or ns == namespace

        batch = Batch(
            records={
                ns: dict(rs) for ns, rs in self._records.items() if rs and ours(ns)
            },
            edges={ns: es for ns, es in self._edges.items() if es and ours(ns)},
            audit={ns: es for ns, es in self._audit.items() if es and ours(ns)},
            captures=[c for c in self.captures if ours(c[0])],
        )
        for ns in [*self._edges, *self._audit]:
            if ours(ns):
                self._edges.pop(ns, None)
                self._audit.pop(ns, None)
        return batch

    def write(self, batch: Batch, landed: Callable[[str], None] | None = None) -> None:
        """Write a detached batch to the store; needs no lock (see :meth:`settle`).

        Tenants one after another, or all at once where the store combines
        concurrent writes (a Milvus server: a round's tenants then share a
        few calls per collection instead of three calls each). Tenants with
        the fewest records go first, and ``landed(namespace)`` is called as
        soon as a tenant's writes are done (or failed), so a reader waiting
        for one tenant's writes does not also wait for a big tenant's.
        """
        namespaces = sorted(
            batch.namespaces(), key=lambda ns: len(batch.records.get(ns, ()))
        )
        for namespace in namespaces:  # filled by the writers' threads
            batch.written[namespace] = set()

        def one(namespace: str) -> None:
            self._write_one(batch, namespace)
            if landed is not None:
                landed(namespace)

        self.fanout.each(one, namespaces)

    def _write_one(self, batch: Batch, namespace: str) -> None:
        try:
            self._write_namespace(batch, namespace)
        except Exception as exc:  # kept staged by settle(); the caller decides
            batch.errors[namespace] = exc

    def _write_namespace(self, batch: Batch, namespace: str) -> None:
        # Records, then edges, then audit: a marker is never ahead of its
        # capture's records (the marker itself comes later, in GroupCommit).
        done = batch.written[namespace]
        records = list(batch.records.get(namespace, {}).values())
        if records:
            self.inner.upsert(namespace, records)
        done.add("records")
        edges = list(batch.edges.get(namespace, {}).values())
        if edges:
            self.inner.add_edges(namespace, edges)
        done.add("edges")
        if batch.audit.get(namespace):
            self.inner.append_audit(namespace, batch.audit[namespace])
        done.add("audit")

    def settle(self, batch: Batch, namespaces: Collection[str] | None = None) -> None:
        """Take what a batch wrote out of the stage (call with :attr:`lock` held).

        Args:
            batch: a batch :meth:`write` wrote.
            namespaces: the tenants of the batch to settle (``None``: all).

        A record staged again while the batch was written (a later capture
        merged into it) stays staged for the next round; what a failed
        namespace did not write goes back ahead of what was staged since.
        """
        todo = batch.namespaces() if namespaces is None else namespaces
        for namespace in todo:
            done = batch.written.get(namespace, set())
            if "records" in done:
                self._settle_records(namespace, batch.records.get(namespace, {}))
            if "edges" not in done and namespace in batch.edges:
                newer = self._edges.get(namespace, {})
                self._edges[namespace] = {**batch.edges[namespace], **newer}
            if "audit" not in done and namespace in batch.audit:
                newer_audit = self._audit.get(namespace, [])
                self._audit[namespace] = batch.audit[namespace] + newer_audit
            if namespace in batch.errors:
                self.failed[namespace] = batch.errors[namespace]
            else:
                self.failed.pop(namespace, None)
            self._arrays.pop(namespace, None)  # its rows are stacked again
        self._term_cache.clear()
        while len(self._recent) > self.keep_recent:
            self._recent.popitem(last=False)

    def _settle_records(self, namespace: str, written: dict[str, MemoryRecord]) -> None:
        staged = self._records.get(namespace, {})
        for record_id, record in written.items():
            if staged.get(record_id) is record:  # not staged again since
                del staged[record_id]
            self._recent[(namespace, record_id)] = record
            self._recent.move_to_end((namespace, record_id))
        if not staged:
            self._records.pop(namespace, None)

    def drop(self, namespace: str) -> list[str]:
        """Discard a namespace's staged writes; returns its capture ids (unregistered)."""
        with self.lock:
            self._records.pop(namespace, None)
            self._edges.pop(namespace, None)
            self._audit.pop(namespace, None)
            self.failed.pop(namespace, None)
            doomed = [cid for ns, cid in self.captures if ns == namespace]
            self.captures = [(ns, c) for ns, c in self.captures if ns != namespace]
            return doomed

    @property
    def empty(self) -> bool:
        """Whether nothing waits (no writes, no capture)."""
        return not self.captures and super().empty
