"""An engine's parts, wired and ready, and what they do together.

:class:`EngineParts` is built by :func:`hindsight_lg.memory._wiring.wire`
(the one place that builds parts) and held by the engine through its
:class:`~hindsight_lg.memory._opening.Opening`. Each field is one part; the
engine reaches it as a typed attribute (``self._parts().searcher``). The
methods here are the calls that take several parts at once: a capture with
or without the spool, queueing one, cancelling a namespace's queued
captures, flushing, closing in order.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from hindsight_lg.backends import MemoryBackend, StoreHandle
from hindsight_lg.embeddings import Embedder, Reranker
from hindsight_lg.memory._locks import WriteLocks
from hindsight_lg.memory._read import RecallPath
from hindsight_lg.memory._write import CapturePath, LazyWriter
from hindsight_lg.memory.durability import CaptureWorker, Spool, SpooledCapture
from hindsight_lg.memory.durability.commit import GroupCommit
from hindsight_lg.memory.durability.durable import Write
from hindsight_lg.memory.lifecycle import Lifecycle
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import Searcher
from hindsight_lg.memory.requests import CaptureRequest

_RECALL_THREADS = 32  # concurrent recalls before one waits for a thread


def _pool(threads: int, name: str) -> Callable[[], ThreadPoolExecutor]:
    return lambda: ThreadPoolExecutor(threads, thread_name_prefix=name)


@dataclass(slots=True)
class Pools:
    """The engine's threads; each starts only when first needed.

    Recalls get threads of their own, enough for the concurrent turns of one
    process: time spent queued behind other turns (or behind a background
    consolidation) would count against each deadline. ``arecall``'s calls run
    on a second pool, so a waiting caller never holds the thread its search
    needs. ``search`` runs each recall's dense search beside its other paths
    (one thread per concurrent recall; its jobs wait on nothing).
    ``background`` runs consolidation the captures asked for.
    """

    background: ThreadPoolExecutor = field(default_factory=_pool(4, "hindsight"))
    recall: ThreadPoolExecutor = field(
        default_factory=_pool(_RECALL_THREADS, "hindsight-recall")
    )
    caller: ThreadPoolExecutor = field(
        default_factory=_pool(_RECALL_THREADS, "hindsight-arecall")
    )
    search: ThreadPoolExecutor = field(
        default_factory=_pool(_RECALL_THREADS, "hindsight-search")
    )

    def shutdown(self) -> None:
        """Wait for running work, then stop every thread."""
        for pool in (self.background, self.caller, self.recall, self.search):
            pool.shutdown(wait=True)


@dataclass(slots=True)
class EngineParts:
    """Everything one engine holds, wired and ready (see ``_wiring.wire``).

    ``store`` is the (cached) backend; ``backend`` is the view the engine
    reads and writes through: ``store`` itself, or with a spool a view that
    writes the staged batch first. ``reads`` is ``backend`` with a span per
    call, as the parts see it. ``handle`` is the store's handle, which this
    engine holds a share of (it owns the read cache, the write locks, the
    spool and group commit, and a backend ``from_uri`` opened);
    ``owns_backend`` says whether :meth:`close` closes a backend it did not
    open. ``write`` writes a checked capture; ``capture`` is the call a
    capture goes through: ``write`` itself, or with a spool ``durable``,
    which fsyncs it there first.
    """

    store: MemoryBackend
    backend: MemoryBackend
    reads: MemoryBackend
    embedder: Embedder
    policy: Policy
    llm: Any
    reranker: Reranker | None
    clock: Callable[[], float]
    spool: Spool | None
    group: GroupCommit | None
    writer: LazyWriter
    searcher: Searcher
    lifecycle: Lifecycle
    locks: WriteLocks
    pools: Pools
    worker: CaptureWorker
    write: CapturePath
    capture: Write
    recall: RecallPath
    durable: SpooledCapture | None
    handle: StoreHandle
    fresh_spool: bool
    owns_backend: bool

    def setup(self) -> None:
        """Create collections and check the embedding model; idempotent."""
        self.backend.setup(dim=self.embedder.dim, model_id=self.embedder.model_id)

    def queue(
        self, request: CaptureRequest, capture_id: str | None, dedupe: bool
    ) -> int:
        """Hand a checked capture to the worker; how many messages it queued."""
        item = request.payload()
        if capture_id is not None:
            item["capture_id"] = capture_id  # spooled already
        if isinstance(request.content, str) or not dedupe:
            self.worker.submit(item)
            return 1 if isinstance(request.content, str) else len(request.content)
        return len(self.worker.submit_new(item))

    def cancel_captures(self, namespace: str, thread_id: str | None) -> None:
        """Drop a namespace's (or thread's) captures queued or spooled, not written."""
        self.worker.cancel(namespace, thread_id)
        if self.spool is not None:
            self.spool.purge(namespace, thread_id)
        if self.group is not None:
            # Staged captures reach the store (to be deleted with the rest)
            # and their markers are written now, before the audit is purged.
            self.group.sync()

    def flush(self) -> None:
        """Wait for queued captures, then make every write durable and searchable."""
        self.worker.flush()
        if self.group is not None:
            self.group.sync()
        self.backend.flush()

    def abandon(self) -> None:
        """Let go of parts that failed to open: nothing of them is kept.

        The store is not flushed or closed (it may be what failed); the
        handle's last release closes the spool, so a later open replays it.
        """
        self.worker.close()
        self.pools.shutdown()
        self.writer.close()
        self.handle.release()

    def close(self) -> None:
        """Drain queued captures, stop threads, let go of the store and spool."""
        self.worker.close()
        self.pools.shutdown()
        self.writer.close()
        if self.group is not None:
            self.group.settle()
        self.handle.release()  # the last engine closes spool and group commit
        if self.handle.owns_backend:
            return  # opened by from_uri: the handle's last release closed it
        if self.owns_backend:
            self.store.close()
        else:
            self.store.flush()
