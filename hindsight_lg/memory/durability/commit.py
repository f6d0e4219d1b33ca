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
(a recall right after a capture finds it). A call about one tenant moves
that tenant's part only, and waits only for a write of that tenant already
under way: another tenant's backlog, staged or being written, never holds
up its reads (:mod:`.stage`).

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
from collections import defaultdict
from collections.abc import Callable, Collection, Sequence
from typing import Any

from hindsight_lg.backends import ForwardingBackend, StoreHandle
from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.errors import StoreError, StoreTimeout, StoreUnavailable
from hindsight_lg.memory.durability.spool import Spool, marker_id
from hindsight_lg.memory.durability.stage import SharedStage
from hindsight_lg.memory.durability.staging import Batch, StagedWrites
from hindsight_lg.model import AuditEntry, MemoryRecord
from hindsight_lg.telemetry import SPOOL, degrade

SpoolArg = Spool | str | os.PathLike[str] | None
#: Backend calls that name no tenant: a drain before them writes every tenant.
_ALL_TENANTS = frozenset(
    {"setup", "namespaces", "flush", "close", "stored_model", "combined_writes"}
)


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
        # Tenants whose writes a drain is sending to the store now; a drain
        # of one of them waits (the store must not get an older copy last).
        self._writing: set[str] = set()
        self._landed = threading.Condition(self.stage.lock)
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

    def drain(self, namespace: str | None = None) -> None:
        """Write the stage, or one tenant's part of it, to the store now.

        No flush, no ack. Namespaces the store refused stay staged (see
        :meth:`_refused`); the rest is written whatever one tenant sent.
        The store is written without the stage's lock, so captures go on
        staging (and reading what is staged) meanwhile.

        Args:
            namespace: the tenant a read is about: only its writes go, and
                the drain waits only for a write of that tenant already
                under way (a big tenant's round never holds up a small
                tenant's read). ``None``: every tenant, after every write
                under way.
        """
        with self._landed:
            if namespace is None:
                self._landed.wait_for(lambda: not self._writing)
            else:
                self._landed.wait_for(lambda: namespace not in self._writing)
            if not self.stage.holds(namespace):
                return
            batch = self.stage.detach(namespace)
            tenants = set(batch.namespaces()) | {ns for ns, _ in batch.captures}
            self._writing |= tenants
        left = set(tenants)

        def landed(ns: str) -> None:
            with self._landed:
                left.discard(ns)
                self._settled(batch, {ns})

        try:
            self.stage.write(batch, landed)
        finally:
            with self._landed:
                self._settled(batch, left)  # tenants with captures but no writes
        self._wake.set()

    def _settled(self, batch: Batch, tenants: Collection[str]) -> None:
        """Settle ``tenants`` of a written batch; call with the stage's lock."""
        self.stage.settle(batch, tenants)
        failed = self.stage.failed
        mine = {c for c in batch.captures if c[0] in tenants}
        self._committed += [
            c for c in batch.captures if c in mine and c[0] not in failed
        ]
        self.stage.captures = [
            c for c in self.stage.captures if c not in mine or c[0] in failed
        ]
        for namespace in tenants:
            if namespace in failed:
                self._refused(namespace, failed[namespace])
        self._strikes = {ns: n for ns, n in self._strikes.items() if ns in failed}
        self._writing -= set(tenants)
        self._landed.notify_all()

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
        # Every other call names its tenant first; its reads see that tenant only.
        tenant = None if name in _ALL_TENANTS or not args else args[0]
        try:
            self.group.drain(tenant if isinstance(tenant, str) else None)
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
