"""Group commit: the spool is the write-ahead log, the store is written in batches.

A spooled capture is acknowledged once its line is fsync'd in the spool. The
capture then runs the whole write pipeline in the caller's thread (so it
returns the records it wrote), but its writes go to a shared in-process
stage instead of the store. A committer thread moves the stage to the store
every ``interval_s`` (or once ``max_pending`` captures wait) with one audit
marker per capture, flushes (records, edges, then the audit trail) and acks
the captures in the spool. Many captures thus share one store round per
collection and one flush. Lifecycle writes (consolidate, decay, update, ...)
run a round first, so they never change the records of a capture that a
crash could still replay.

Reads never see a stale store: the engine's backend is a
:class:`DrainingBackend`, which moves the stage to the store before any call
(a recall right after a capture finds it).

Crash safety, step by step: a capture's records are flushed before its
marker (the store flushes the memories, then the edges, then the audit
trail); the marker is flushed before the spool's ``ack``. A kill before the
marker is flushed leaves the capture unacknowledged in the spool, and it is
replayed on the next open, in order (its records, if they were flushed,
absorb the replay as an identical duplicate); a kill after it only replays
into the marker, which acks.

Cost: one store round per collection and one flush per batch.
Limit: another process reading the same Milvus server sees a capture up to
``interval_s`` late (Milvus Lite is single-process).
"""

from __future__ import annotations

import atexit
import os
import threading
import time
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from hindsight_lg.backends import ForwardingBackend, StoreHandle, combines_writes
from hindsight_lg.backends.base import Hit, MemoryBackend, Where, asked_vectors
from hindsight_lg.errors import StoreError, StoreTimeout, StoreUnavailable
from hindsight_lg.memory.durability.fanout import Fanout
from hindsight_lg.memory.durability.spool import Spool, marker_id
from hindsight_lg.memory.durability.staging import Batch, StagedWrites
from hindsight_lg.model import AuditEntry, MemoryRecord
from hindsight_lg.telemetry import SPOOL, degrade

SpoolArg = Spool | str | os.PathLike[str] | None


class SharedStage(StagedWrites):
    """The captures' writes waiting for the committer, safe across threads.

    Records it committed stay readable with their vectors (``recent``, the
    last ``keep_recent``), so merging a new event into one just captured
    needs no store round trip. Every other in-process write reaches the store
    through :class:`DrainingBackend`, which drops the records it writes from
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
        search = getattr(self.inner, "search_dense_local", self.inner.search_dense)
        found = search(namespace, vector, where, limit=limit, **asked_vectors(vectors))
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
        throughout; :class:`GroupCommit` writes without it (:meth:`detach`,
        :meth:`write`, :meth:`settle`).
        """
        with self.lock:
            batch = self.detach()
            self.write(batch)
            self.settle(batch)

    def detach(self) -> Batch:
        """What is staged now, to be written (call with :attr:`lock` held).

        Records stay staged, and so readable, until :meth:`settle`: a capture
        staging meanwhile still merges into them. Edges and audit entries
        (which nothing reads back from the stage) leave it now.
        """
        batch = Batch(
            records={ns: dict(rs) for ns, rs in self._records.items() if rs},
            edges={ns: es for ns, es in self._edges.items() if es},
            audit={ns: es for ns, es in self._audit.items() if es},
            captures=list(self.captures),
        )
        self._edges = defaultdict(dict)
        self._audit = defaultdict(list)
        return batch

    def write(self, batch: Batch) -> None:
        """Write a detached batch to the store; needs no lock (see :meth:`settle`).

        Tenants one after another, or all at once where the store combines
        concurrent writes (a Milvus server: a round's tenants then share a
        few calls per collection instead of three calls each).
        """
        namespaces = batch.namespaces()
        for namespace in namespaces:  # filled by the writers' threads
            batch.written[namespace] = set()
        self.fanout.each(lambda ns: self._write_one(batch, ns), namespaces)

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

    def settle(self, batch: Batch) -> None:
        """Take what a batch wrote out of the stage (call with :attr:`lock` held).

        A record staged again while the batch was written (a later capture
        merged into it) stays staged for the next round; what a failed
        namespace did not write goes back ahead of what was staged since.
        """
        for namespace in batch.namespaces():
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
        self._arrays.clear()
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


class GroupCommit:
    """Moves staged captures to the store in batches; acks them in the spool.

    Args:
        backend: the (cached) backend the stage drains into.
        spool: where the captures are acknowledged.
        interval_s: the longest a capture waits for its batch.
        max_pending: a batch is committed once this many captures wait.
        max_strikes: rounds in a row a tenant's staged captures may fail
            with a store error other than an outage before they are
            quarantined (see :meth:`_refused`).
    """

    def __init__(
        self,
        backend: MemoryBackend,
        spool: Spool,
        *,
        interval_s: float = 0.5,
        max_pending: int = 256,
        max_strikes: int = 3,
    ) -> None:
        self.backend = backend
        self.max_strikes = max_strikes
        self._strikes: dict[str, int] = {}
        self.spool = spool
        self.stage = SharedStage(backend)
        self.interval_s = interval_s
        self.max_pending = max_pending
        self._committed: list[tuple[str, str]] = []
        self._sync_lock = threading.Lock()
        self._drain_lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = False
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def take(self, staged: StagedWrites, namespace: str, capture_id: str) -> None:
        """Accept one capture's writes (see :meth:`SharedStage.take`).

        A capture that wrote nothing (it was forgotten while queued) is only
        acked: there is nothing to replay, and no marker to leave behind.
        """
        if staged.empty:
            self.spool.ack(capture_id)
            return
        self.stage.take(staged, namespace, capture_id)
        waiting = len(self.stage.captures)
        if waiting >= 4 * self.max_pending:
            self.sync()  # back-pressure: the committer cannot keep up
        elif waiting >= self.max_pending:
            self._wake.set()
        self._start()

    def drain(self) -> None:
        """Write the stage to the store now (no flush, no ack).

        Namespaces the store refused stay staged (see :meth:`_refused`);
        the rest is written whatever one tenant sent. The store is written
        without the stage's lock, so captures go on staging (and reading
        what is staged) meanwhile; one drain writes at a time, so what a
        reader finds staged is never older than the store.
        """
        if self.stage.empty:
            return
        with self._drain_lock:
            with self.stage.lock:
                if self.stage.empty:
                    return
                batch = self.stage.detach()
            self.stage.write(batch)
            with self.stage.lock:
                self._settled(batch)
        self._wake.set()

    def _settled(self, batch: Batch) -> None:
        self.stage.settle(batch)
        failed = self.stage.failed
        mine = set(batch.captures)
        self._committed += [c for c in batch.captures if c[0] not in failed]
        self.stage.captures = [
            c for c in self.stage.captures if c not in mine or c[0] in failed
        ]
        for namespace, exc in list(failed.items()):
            self._refused(namespace, exc)
        self._strikes = {ns: n for ns, n in self._strikes.items() if ns in failed}

    def _refused(self, namespace: str, exc: Exception) -> None:
        """Count a namespace's failed write; quarantine it once it cannot succeed.

        An outage (:class:`StoreUnavailable`, :class:`StoreTimeout`) holds
        every namespace alike and is retried for as long as it lasts. Any
        other failure is about what this tenant sent: after
        ``max_strikes`` rounds in a row (at once for a refusal that is not
        a store error, such as a limit) its staged captures move to the
        spool's dead-letter file, with a span event and a log line, and the
        store goes on.
        """
        if isinstance(exc, (StoreUnavailable, StoreTimeout)):
            return
        strikes = self._strikes.get(namespace, 0) + 1
        self._strikes[namespace] = strikes
        if isinstance(exc, StoreError) and strikes < self.max_strikes:
            return
        doomed = self.stage.drop(namespace)
        self._strikes.pop(namespace, None)
        entries = {e.id: e for e in self.spool.pending(namespace)}
        for cid in doomed:
            entry = entries.get(cid)
            if entry is not None:
                self.spool.quarantine(entry, exc)
        degrade(
            SPOOL,
            "the store refused a tenant's captures: moved to the dead-letter file",
            log_event="capture_quarantined",
            namespace=namespace,
            capture_ids=",".join(doomed[:20]) or None,
            error=repr(exc)[:200],
            dead_letters=str(self.spool.dead_path),
        )

    def sync(self) -> None:
        """Drain, mark, flush and ack the captures staged so far.

        One round writes the staged batch and one marker per capture, then
        flushes once: records, edges, then the audit trail, so a marker is
        durable only after its capture's records are.

        Raises:
            StoreError: the store failed; nothing of the failing part was
                acked, and its captures stay in the spool (and in the
                stage) for a retry. Namespaces written meanwhile are acked.
        """
        with self._sync_lock:
            self._round()

    def _round(self) -> None:
        self.drain()
        with self.stage.lock:
            todo, self._committed = self._committed, []
            failed = dict(self.stage.failed)
        if todo:
            try:
                self._mark(todo)
                self.backend.flush()
            except StoreError as exc:
                with self.stage.lock:
                    self._committed = todo + self._committed
                _failed("capture_commit_failed", exc, [cid for _, cid in todo])
                raise
            self.spool.ack_many([cid for _, cid in todo])
        if failed:
            waiting = [c for ns, c in self.stage.captures if ns in failed]
            first = next(iter(failed.values()))
            _failed("capture_commit_failed", first, waiting)
            # The store's own error class (an outage stays StoreUnavailable).
            kind = type(first) if isinstance(first, StoreError) else StoreError
            raise kind(f"writing staged captures: {first!r}"[:300]) from first

    def _mark(self, done: list[tuple[str, str]]) -> None:
        by_namespace: dict[str, list[AuditEntry]] = defaultdict(list)
        for namespace, cid in done:
            entry = AuditEntry(namespace, marker_id(cid), "captured", detail={})
            by_namespace[namespace].append(entry)
        failed: list[StoreError] = []

        def mark(namespace: str) -> None:
            try:
                self.backend.append_audit(namespace, by_namespace[namespace])
            except StoreError as exc:
                failed.append(exc)

        self.stage.fanout.each(mark, by_namespace)
        if failed:
            raise failed[0]

    def _start(self) -> None:
        if self._thread is not None or self._stop:
            return
        thread = threading.Thread(
            target=self._run, name="hindsight-commit", daemon=True
        )
        self._thread = thread
        thread.start()
        at_exit(self.close)

    def _run(self) -> None:
        backoff = self.interval_s
        while not self._stop:
            self._wake.wait(self.interval_s)
            self._wake.clear()
            waited = time.monotonic() - self.stage.since
            if self.stage.empty and not self._committed:
                continue
            if waited < self.interval_s and len(self.stage.captures) < self.max_pending:
                self._stopped.wait(max(0.0, self.interval_s - waited))
            try:
                self.sync()
                backoff = self.interval_s
            except StoreError:  # logged by the round; retried, less often
                self._stopped.wait(backoff)
                backoff = min(backoff * 2, 30.0)
            except Exception as exc:  # the committer must outlive any failure
                _failed("capture_commit_failed", exc)
                self._stopped.wait(self.interval_s)

    def settle(self) -> None:
        """Commit and ack what is staged; a store failure is logged, not raised."""
        try:
            self.sync()
        except StoreError:  # logged; the spool keeps them: replayed at next open
            pass

    def close(self) -> None:
        """Commit what is staged, then stop the committer; idempotent."""
        self._stop = True
        self._stopped.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
        try:
            self.sync()
        except StoreError:  # logged; the spool keeps them: replayed at next open
            pass
        finally:
            self.stage.fanout.stop()


def open_durability(
    handle: StoreHandle, store: MemoryBackend, spool: SpoolArg
) -> tuple[Spool | None, GroupCommit | None, bool]:
    """The spool and its group commit (into ``store``), parts of the store's handle.

    Engines on one store and spool file share both; spool keys are resolved
    paths, so ``./a.spool`` and ``/abs/a.spool`` are one file.

    Returns:
        The spool, its group commit, and ``True`` when the spool was just
        opened, so its leftovers must be replayed (by this engine only).
    """
    if spool is None:
        return None, None, False
    path = spool.path if isinstance(spool, Spool) else spool
    key = os.path.realpath(os.fspath(path))
    shared, fresh = handle.part(
        ("spool", key),
        lambda: (spool if isinstance(spool, Spool) else Spool(path)).open(),
    )
    group, _ = handle.part(("group", key), lambda: GroupCommit(store, shared))
    return shared, group, fresh


def at_exit(hook: Callable[[], None]) -> None:
    """Run ``hook`` (a bound method) at interpreter exit, before thread pools stop.

    A daemon thread dies with the interpreter, so staged captures must be
    committed first. Plain ``atexit`` runs too late: by then the thread
    pools Milvus Lite flushes with are shut down (they stop in
    ``threading``'s own exit hooks, which run in reverse order of
    registration, before ``atexit``). A hook that finds the store gone
    leaves the captures in the spool, replayed at the next open.

    The hook's object is held weakly: exit hooks cannot be unregistered, and
    a strong reference would keep every closed memory (its backend and read
    cache included) alive until the process ends. An object still in use is
    alive anyway (its thread holds it), so its hook still runs.
    """
    ref = weakref.WeakMethod(hook)

    def run() -> None:
        bound = ref()
        if bound is not None:
            bound()

    register = getattr(threading, "_register_atexit", None)
    if register is None:  # not CPython: the spool replays what is left
        atexit.register(run)
        return
    try:
        register(run)
    except RuntimeError:  # the interpreter is already shutting down
        pass


def _failed(event: str, exc: Exception, captures: Sequence[str] = ()) -> None:
    degrade(
        SPOOL,
        "the store failed: staged captures wait in the spool",
        log_event=event,
        error=repr(exc)[:200],
        capture_ids=",".join(captures[:20]) or None,
        waiting=len(captures) or None,
    )


class DrainingBackend(ForwardingBackend):
    """The engine's view of the store: staged captures are drained before any call.

    A failed drain does not fail the call: the call sees what the store holds
    (the captures are safe in the spool and the committer retries).
    """

    def __init__(self, inner: MemoryBackend, group: GroupCommit) -> None:
        super().__init__(inner)
        self.group = group

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        try:
            self.group.drain()
        except StoreError as exc:
            _failed("capture_drain_failed", exc)
        return super()._forward(name, *args, **kwargs)

    # A write outside the captures makes what the stage remembers stale.

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        self.group.stage.forget_recent(namespace, [r.id for r in records])
        super().upsert(namespace, records)

    def delete(self, namespace: str, ids: Sequence[str]) -> int:
        self.group.stage.forget_recent(namespace, ids)
        return super().delete(namespace, ids)

    def close(self) -> None:
        """Commit staged captures, then close the store."""
        self.group.close()
        self.inner.close()
