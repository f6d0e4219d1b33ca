"""How an engine's parts are built and wired: the one place that does it.

:class:`~hindsight_lg.memory.engine.HindsightMemory` holds an
:class:`~hindsight_lg.memory._parts.EngineParts` and calls into it; it builds
nothing itself. Here:

- :func:`wire` assembles the parts without touching the store, each once,
  after the parts it needs, which it gets in its constructor: the read
  cache over the backend, the spool and its group commit (engines on one
  store share both, and the write locks: the store's handle owns them, see
  :mod:`hindsight_lg.backends.handle`), the store view that writes the
  staged batch first, the writer, searcher and lifecycle over a traced view,
  the write locks, the thread pools, the background worker and the write
  callable the spool and the worker call.
- :func:`open_parts` is :func:`wire` followed by the I/O an engine needs
  before its first call: :meth:`EngineParts.setup` (collections, the
  embedding model's check) and the replay of whatever a previous run left
  in the spool. ``from_uri`` goes through it at once, ``HindsightMemory(...)``
  at its first use (:mod:`hindsight_lg.memory._opening`).
- :func:`open_uri` opens the store at a URI first (``from_uri``).
- ``EngineParts.close`` takes it all down again in order.
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, cast

from hindsight_lg.backends import (
    MemoryBackend,
    open_backend,
    open_handle,
    read_cache_of,
    store_handle,
    stored_model,
    with_read_cache,
)
from hindsight_lg.embeddings import (
    Embedder,
    Reranker,
    default_embedder,
    stored_embedder,
)
from hindsight_lg.memory._parts import EngineParts, Pools
from hindsight_lg.memory._read import RecallPath
from hindsight_lg.memory._shared import write_locks
from hindsight_lg.memory._traced import traced
from hindsight_lg.memory._write import CapturePath, LazyWriter
from hindsight_lg.memory.durability import CaptureWorker, Spool, SpooledCapture
from hindsight_lg.memory.durability.batches import Batches
from hindsight_lg.memory.durability.commit import (
    DrainingBackend,
    GroupCommit,
    open_durability,
)
from hindsight_lg.memory.durability.durable import Write, queued
from hindsight_lg.memory.lifecycle import Lifecycle
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import Searcher
from hindsight_lg.model import now_ts

if TYPE_CHECKING:
    from hindsight_lg.memory.capture import Writer
    from hindsight_lg.memory.capture.conflicts import Judge
    from hindsight_lg.memory.language.encode import Extractor

SpoolArg = Spool | str | os.PathLike[str] | None


def open_uri(
    uri: str,
    embedder: Embedder | None,
    *,
    token: str = "",
    prefix: str = "hindsight",
    open_store: Callable[..., MemoryBackend] = open_backend,
    **options: Any,
) -> EngineParts:
    """:func:`open_parts` over the store at ``uri`` (see ``HindsightMemory.from_uri``).

    A server or ``:memory:`` store is owned by the parts; a Milvus Lite file
    is shared by every engine of this process that opens it (one backend and
    read cache per file) and gets the spool ``<uri>.spool`` by default.
    ``open_store`` opens a store (:func:`~hindsight_lg.backends.open_backend`).
    """
    # A Lite file: one handle (backend, read cache, spool) per file in this
    # process; a server or :memory: store gets one of its own.
    handle = open_handle(
        uri, lambda: open_store(uri, token=token, prefix=prefix), prefix=prefix
    )
    if uri != ":memory:" and "://" not in uri:
        options.setdefault("spool", uri.rstrip("/\\") + ".spool")
    try:
        return open_parts(handle.backend, embedder, **options)
    finally:
        handle.release()  # the parts hold a share of their own (or failed)


def open_parts(
    backend: MemoryBackend,
    embedder: Embedder | None = None,
    **options: Any,
) -> EngineParts:
    """:func:`wire`, then set the store up and replay the spool.

    Args:
        backend: where memories live.
        embedder: the dense embedding model; when ``None``, the one the store
            records (:func:`adopted_embedder`).
        **options: the keyword arguments of :func:`wire`.

    Raises:
        Exception: whatever ``setup`` or the replay raised; the parts are
            abandoned first (:meth:`EngineParts.abandon`), so a later open
            starts afresh and replays the spool.
    """
    chosen = embedder if embedder is not None else adopted_embedder(backend)
    parts = wire(backend, chosen, **options)
    try:
        parts.setup()
        # Whatever a previous run left in the spool is replayed now (by the
        # first engine to open it in this process).
        if parts.durable is not None and parts.fresh_spool:
            parts.durable.replay()
    except BaseException:
        parts.abandon()
        raise
    return parts


def adopted_embedder(backend: MemoryBackend) -> Embedder:
    """The embedder of an engine given none: the store's own, else the default.

    A store that records its model (every store once set up) is opened with
    that model, so its vectors and the queries' agree without the caller
    naming it; a model this machine lacks becomes a stand-in that embeds
    nothing (:func:`~hindsight_lg.embeddings.stored_embedder`). A new store
    gets :func:`~hindsight_lg.embeddings.default_embedder`.
    """
    recorded = stored_model(backend)
    if recorded is None:
        return default_embedder()
    return stored_embedder(*recorded)


def wire(
    backend: MemoryBackend,
    embedder: Embedder | None = None,
    *,
    policy: Policy | None = None,
    llm: Any = None,
    reranker: Reranker | None = None,
    clock: Callable[[], float] = now_ts,
    owns_backend: bool = False,
    cache: bool = True,
    spool: SpoolArg = None,
) -> EngineParts:
    """Build an engine's parts (see :class:`HindsightMemory` for the arguments).

    Each part is built once, here, after the parts it needs, and gets them
    in its constructor. The store is not touched; the spool is opened (or
    its share taken).
    """
    # Reads other than dense search are served from a write-through
    # namespace cache, so a recall costs about one store query.
    store = with_read_cache(backend) if cache else read_cache_of(backend) or backend
    handle = store_handle(backend)
    opened, group, fresh = open_durability(handle, store, spool)
    handle.retain()
    # With a spool, captures are acknowledged once fsync'd there and reach
    # the store in batches (group commit); every other store call goes
    # through a view that writes the staged batch first.
    view: MemoryBackend = store if group is None else DrainingBackend(store, group)
    chosen = embedder if embedder is not None else default_embedder()
    policy = policy or Policy()
    locks = write_locks(handle)  # captures lock their namespace, lifecycle all
    traced_view = traced(view)  # each store call of the parts gets a span
    # Tenants load for captures through the store (no drain of the stage).
    # cache=False: the caller's backend may wrap a read cache of its own (the
    # benchmarks' timing views do); warming it is an ordinary read.
    warm = store if read_cache_of(store) is not None or not cache else None
    writer = _lazy_writer(traced_view, chosen, policy, llm, group, warm)
    lifecycle = Lifecycle(
        traced_view,
        chosen,
        policy,
        llm=llm,
        clock=clock,
        write_lock=cast(threading.RLock, locks),  # same protocol
        writer=writer,
        # Captures acknowledged but not in the store are committed first.
        before_write=None if group is None else group.sync,
    )
    pools = Pools()
    searcher = Searcher(traced_view, chosen, policy, reranker, pools.search)
    counter = _EpisodeCounter(policy, pools.background, lifecycle)
    write = CapturePath(writer, locks, clock, opened, counter.add)
    durable = None if opened is None else SpooledCapture(opened, write, view, clock)
    # A capture with a spool is fsync'd there first, then written.
    capture: Write = write if durable is None else durable.capture
    worker = CaptureWorker(
        queued(capture),
        # "Accepted" by the worker means spooled: it survives a crash.
        on_accept=None if durable is None else durable.accept,
        # Captures queued together embed in one model call (capture.ahead).
        ahead=write.ahead,
    )
    return EngineParts(
        store=store,
        backend=view,
        reads=traced_view,
        embedder=chosen,
        policy=policy,
        llm=llm,
        reranker=reranker,
        clock=clock,
        spool=opened,
        group=group,
        writer=writer,
        searcher=searcher,
        lifecycle=lifecycle,
        locks=locks,
        pools=pools,
        worker=worker,
        write=write,
        capture=capture,
        recall=RecallPath(searcher, pools.recall, view),
        durable=durable,
        handle=handle,
        fresh_spool=fresh,
        owns_backend=owns_backend,
    )


def _lazy_writer(
    view: MemoryBackend,
    embedder: Embedder,
    policy: Policy,
    llm: Any,
    group: GroupCommit | None,
    warm: MemoryBackend | None,
) -> LazyWriter:
    """The engine's writer, built by its first capture (see :class:`LazyWriter`).

    ``warm``: the view through which tenants load into the read cache ahead
    of their captures (``None``: no read cache, nothing to load ahead).
    """

    def build() -> Writer:
        # Imported here: the encode pipeline loads with the first capture.
        from hindsight_lg.memory.capture import EmbeddingMemo, Writer
        from hindsight_lg.memory.capture.placing import Placer
        from hindsight_lg.memory.capture.prefetch import TenantPrefetch

        # Loads a capture's tenant into the read cache while it encodes.
        prefetch = None if warm is None else TenantPrefetch(lambda: warm, embedder.dim)
        return Writer(
            Placer(view, Batches(view, group), policy, _judge(llm)),
            EmbeddingMemo(embedder),  # captures queued together share a model call
            policy,
            _extractor(llm),
            prefetch=prefetch,
        )

    return LazyWriter(build)


def _judge(llm: Any) -> Judge | None:
    # With a model, the model judges changes of mind; heuristics otherwise.
    if llm is None:
        return None
    from hindsight_lg.memory.capture.llm_judge import llm_judge

    return llm_judge(llm)


def _extractor(llm: Any) -> Extractor | None:
    if llm is None:
        return None
    from hindsight_lg.memory.language.extract import llm_extractor

    return llm_extractor(llm)


class _EpisodeCounter:
    """Consolidates a namespace in the background once it has enough new episodes.

    Never on the capturing caller's time: the consolidation runs on the
    engine's background pool.
    """

    def __init__(
        self, policy: Policy, pool: ThreadPoolExecutor, lifecycle: Lifecycle
    ) -> None:
        self._policy = policy
        self._pool = pool
        self._lifecycle = lifecycle
        self._new: Counter[str] = Counter()

    def add(self, namespace: str, n: int) -> None:
        """Count ``n`` new episodes of ``namespace``."""
        self._new[namespace] += n
        if self._new[namespace] >= self._policy.consolidate_every > 0:
            self._new[namespace] = 0
            self._pool.submit(self._lifecycle.consolidate, namespace)
