"""``HindsightMemory``: the engine users hold. Capture, recall, inspect, close.

The engine is a facade over three collaborators: a :class:`Writer` (capture),
a :class:`Searcher` (recall) and a :class:`Lifecycle` (update, decay,
consolidate, forget). Every public method has an async twin by name
(``recall``/``arecall``) that runs the store I/O in a worker thread.
"""

from __future__ import annotations

import asyncio
import contextvars
import enum
import functools
import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Final, cast

from hindsight_lg import telemetry
from hindsight_lg.backends import (
    MemoryBackend,
    Where,
    check_namespace,
    open_backend,
    read_cache_of,
    with_read_cache,
)
from hindsight_lg.embeddings import Embedder, Reranker, default_embedder
from hindsight_lg.memory._coalesce import CoalescingEmbedder
from hindsight_lg.memory._shared import acquire, file_key, release, write_locks
from hindsight_lg.memory._traced import traced
from hindsight_lg.memory._write import CapturePath
from hindsight_lg.memory.capture import Writer
from hindsight_lg.memory.durability import CaptureWorker, Spool, SpooledCapture
from hindsight_lg.memory.durability.commit import DrainingBackend, GroupCommit
from hindsight_lg.memory.language.encode import Extractor
from hindsight_lg.memory.lifecycle import (
    ClusterParams,
    Correction,
    CorrectionFactors,
    Lifecycle,
    Progress,
)
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import RecallResult, Searcher
from hindsight_lg.memory.requests import (
    RecallRequest,
    capture_request,
    recall_request,
    unchecked,
)
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    Kind,
    MemoryRecord,
    Scope,
    SourceKind,
    Tier,
    now_ts,
)

_ALL_STATUSES = ("active", "cold", "superseded", "archived")
_RECALL_THREADS = 32  # concurrent recalls before one waits for a thread
_WARM_UP_NAMESPACE = "hindsight-warm-up"  # searched once at open; holds nothing


class DefaultTimeout(enum.Enum):
    """The type of :data:`DEFAULT_TIMEOUT`."""

    TIMEOUT = "the policy's recall_timeout_s"


#: ``recall(timeout=DEFAULT_TIMEOUT)``: the policy's ``recall_timeout_s``.
DEFAULT_TIMEOUT: Final = DefaultTimeout.TIMEOUT


class HindsightMemory:
    """Long-term memory for agents: capture turns, recall by association.

    Args:
        backend: where memories live (:class:`~hindsight_lg.backends.milvus.MilvusBackend`
            or the in-memory reference backend).
        embedder: dense embedding model; see :func:`~hindsight_lg.embeddings.default_embedder`.
        policy: every tunable; defaults are the design's seed values.
        llm: optional LangChain chat model for extraction (heuristics without it).
        reranker: optional cross-encoder applied after scoring.
        clock: returns "now" as POSIX seconds; inject one for deterministic tests.
        owns_backend: close the backend in :meth:`close` (``from_uri`` sets it).
        cache: serve reads other than dense search from a write-through
            namespace cache (:mod:`hindsight_lg.backends.cached`). ``False``
            suits one-shot work (the CLI's commands that embed nothing): reads
            go to the store without first loading whole namespaces; if another
            engine in this process caches the same backend, its cache is used,
            so neither reads stale rows.
        spool: a :class:`~hindsight_lg.memory.durability.spool.Spool` or its file path:
            captures are acknowledged once fsync'd there and replayed after a
            crash or a store outage (see ``docs/reliability.md``).

    Example:
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
        >>> _ = memory.capture("I prefer green tea over coffee", namespace="u42")
        >>> memory.recall("what does the user drink?", namespace="u42").records[0].kind
        <Kind.PREFERENCE: 'preference'>
    """

    def __init__(
        self,
        backend: MemoryBackend,
        embedder: Embedder | None = None,
        *,
        policy: Policy | None = None,
        llm: Any = None,
        reranker: Reranker | None = None,
        clock: Callable[[], float] = now_ts,
        owns_backend: bool = False,
        cache: bool = True,
        spool: Spool | str | os.PathLike[str] | None = None,
    ) -> None:
        # Reads other than dense search are served from a write-through
        # namespace cache, so a recall costs about one store query.
        self.backend = self._store = (
            with_read_cache(backend) if cache else read_cache_of(backend) or backend
        )
        # With a spool, captures are acknowledged once fsync'd there and
        # reach the store in batches (group commit); every other store call
        # goes through a view that writes the staged batch first. Engines on
        # one spool file share it and its group commit (see _shared).
        self._shares: list[tuple[tuple[str, ...], Callable[[], None]]] = []
        self._backend_key: tuple[str, ...] | None = None
        self._closed = False
        self.spool, self._group, replay = self._open_spool(spool)
        if self._group is not None:
            self.backend = DrainingBackend(self.backend, self._group)
        self.embedder = embedder if embedder is not None else default_embedder()
        self.policy = policy or Policy()
        self.llm = llm
        self.reranker = reranker
        self.clock = clock
        self._owns_backend = owns_backend
        # The engine's parts reach the store through a wrapper that gives each
        # store call its own span; self.backend is the (cached) backend itself.
        view = traced(self.backend)
        self._writer = Writer(view, self.embedder, self.policy, self._extractor())
        # Concurrent recalls embed their queries in one batch (see _coalesce).
        self._searcher = Searcher(
            view,
            CoalescingEmbedder(self.embedder),
            self.policy,
            reranker,
        )
        self._writer.sink = self._group
        # Captures lock their namespace; lifecycle operations the whole engine.
        self._locks = write_locks(self._store)
        self._write_lock = cast(threading.RLock, self._locks)  # same protocol
        self.lifecycle = Lifecycle(
            view,
            self.embedder,
            self.policy,
            llm=llm,
            clock=clock,
            write_lock=self._write_lock,
            writer=self._writer,
        )
        if self._group is not None:
            self.lifecycle.before_write = self._group.sync
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hindsight")
        # Recalls get threads of their own, enough for the concurrent turns of
        # one process: time spent queued behind other turns (or behind a
        # background consolidation) would count against each deadline. Threads
        # start only when needed. arecall's calls run on a second pool, so a
        # waiting caller never holds the thread its search needs.
        self._recall_pool = ThreadPoolExecutor(
            max_workers=_RECALL_THREADS, thread_name_prefix="hindsight-recall"
        )
        self._caller_pool = ThreadPoolExecutor(
            max_workers=_RECALL_THREADS, thread_name_prefix="hindsight-arecall"
        )
        self.worker = CaptureWorker(self._queued)
        self._new_episodes: Counter[str] = Counter()
        try:
            self.setup()
        except BaseException:
            self._release_shares()  # a later open of the spool must replay it
            raise
        # Whatever a previous run left in the spool is replayed now (by the
        # first engine to open it in this process).
        self._write = CapturePath(
            self._writer, self._locks, clock, self.spool, self._count_episodes
        )
        self._durable = (
            None
            if self.spool is None
            else SpooledCapture(self.spool, self._write, self.backend, clock)
        )
        if self._durable is not None:
            self.worker.on_accept = self._durable.accept
            if replay:
                self._durable.replay()

    def _open_spool(
        self, spool: Spool | str | os.PathLike[str] | None
    ) -> tuple[Spool | None, GroupCommit | None, bool]:
        if spool is None:
            return None, None, False
        path = spool.path if isinstance(spool, Spool) else spool
        key = file_key("spool", path)
        shared, fresh = acquire(
            key, lambda: spool if isinstance(spool, Spool) else Spool(path)
        )
        group, _ = acquire((*key, "group"), lambda: GroupCommit(self._store, shared))
        self._shares = [((*key, "group"), group.close), (key, shared.close)]
        return shared, group, fresh

    @classmethod
    def from_uri(
        cls,
        uri: str = "./hindsight.db",
        *,
        embedder: Embedder | str | None = None,
        token: str = "",
        prefix: str = "hindsight",
        warm_up: bool = True,
        **kwargs: Any,
    ) -> HindsightMemory:
        """Open memory at ``uri``: a Milvus Lite file, ``http(s)://`` server, or ``:memory:``.

        The returned memory owns its backend: :meth:`close` closes it. A
        Milvus Lite file gets the capture spool ``<uri>.spool`` unless
        ``spool`` is given (``spool=None`` turns it off): captures are then
        acknowledged once fsync'd there and written in batches. With
        ``warm_up`` (the default) the embedding model and the search path are
        loaded before it returns (:meth:`warm_up`); pass ``False`` for work
        that embeds nothing (listing, stats, export, forget), which then never
        loads the model.
        """
        chosen = default_embedder(embedder)
        if uri == ":memory:" or "://" in uri:
            backend = open_backend(uri, token=token, prefix=prefix)
            opened = cls(backend, chosen, owns_backend=True, **kwargs)
            if warm_up:
                opened.warm_up()
            return opened
        # A Lite file: one backend (and read cache) per file in this process.
        key = file_key("lite", uri, prefix)
        backend, _ = acquire(key, lambda: open_backend(uri, prefix=prefix))
        kwargs.setdefault("spool", uri.rstrip("/\\") + ".spool")
        try:
            memory = cls(backend, chosen, **kwargs)
        except BaseException:
            if release(key):
                backend.close()
            raise
        memory._backend_key = key
        if warm_up:
            memory.warm_up()
        return memory

    @classmethod
    async def afrom_uri(
        cls,
        uri: str = "./hindsight.db",
        *,
        embedder: Embedder | str | None = None,
        token: str = "",
        prefix: str = "hindsight",
        **kwargs: Any,
    ) -> HindsightMemory:
        """Async twin of :meth:`from_uri`: opens memory off the event loop.

        Loading the embedding model, connecting to Milvus (or starting Milvus
        Lite) and loading collections take seconds; here they run in a worker
        thread, so other coroutines keep running meanwhile.

        Example:
            >>> async def main() -> None:
            ...     async with await HindsightMemory.afrom_uri(":memory:") as memory:
            ...         await memory.asubmit("I prefer green tea", namespace="u42")
        """
        return await asyncio.to_thread(
            functools.partial(
                cls.from_uri,
                uri,
                embedder=embedder,
                token=token,
                prefix=prefix,
                **kwargs,
            )
        )

    def setup(self) -> None:
        """Create collections and check the embedding model; idempotent."""
        self.backend.setup(dim=self.embedder.dim, model_id=self.embedder.model_id)

    def warm_up(self, namespaces: Sequence[str] = ()) -> None:
        """Load the embedding model and the store's search path now, not at a recall.

        A model's first call loads its weights and a store's first search
        loads its index: seconds that a recall's deadline would count, so the
        first turns of an app would answer without memory. :meth:`from_uri`
        calls this; call it yourself after building memory by hand.

        Args:
            namespaces: tenants to load into the read cache as well. The first
                read of a namespace loads it (about 3 s for 10,000 memories on
                Milvus Lite), so a large tenant's first recall after a start
                would miss its deadline; name the tenants you expect.

        Example:
            >>> memory = HindsightMemory.from_uri(":memory:", embedder="hashing")
            >>> memory.warm_up(namespaces=["u42"])
        """
        vector = self.embedder.embed(["warm up"])[0]
        self.backend.search_dense(_WARM_UP_NAMESPACE, vector, Where(), limit=1)
        if read_cache_of(self._store) is None:
            return  # no read cache (cache=False): nothing to load ahead
        for namespace in namespaces:
            self.backend.count(check_namespace(namespace), Where(statuses=()))

    def _extractor(self) -> Extractor | None:
        if self.llm is None:
            return None
        from hindsight_lg.memory.language.extract import llm_extractor

        return llm_extractor(self.llm)

    # -- write -------------------------------------------------------------

    def capture(
        self,
        messages_or_text: Any,
        *,
        namespace: str,
        agent_id: str | None = None,
        thread_id: str | None = None,
        speaker: str | None = None,
        event_time: float | None = None,
        source_ids: Sequence[str] | None = None,
        scope: Scope | str = Scope.PRIVATE,
        capture_id: str | None = None,
    ) -> list[MemoryRecord]:
        """Encode a turn (text, a message, or messages) into long-term memories.

        Args:
            messages_or_text: a string, a LangChain message or dict, or a list of them.
            namespace: the tenant (usually the user id); required.
            agent_id: the writing agent; private memories are visible to it only.
            thread_id: the conversation thread, kept as the memory's source.
            speaker: who said a plain-text turn.
            event_time: when it was said (POSIX seconds); now by default.
            source_ids: message or dialogue-turn ids this turn came from.
            scope: ``private`` (default), ``team`` or ``global``.
            capture_id: with a spool, the id of an already spooled capture.

        Returns:
            The memories written or updated (merged duplicates appear once);
            with a spool, ``[]`` when the store failed and the turn waits there.

        Raises:
            ValueError: empty namespace, bytes or binary content, or an
                ``event_time`` that is NaN, infinite or outside years 1-9999.
            TypeError: an ``event_time`` that is not a number.
        """
        request = capture_request(
            messages_or_text,
            namespace=namespace,
            agent_id=agent_id,
            thread_id=thread_id,
            speaker=speaker,
            event_time=self.clock() if event_time is None else event_time,
            source_ids=source_ids,
            scope=scope,
        )
        if self._durable is not None:
            return self._durable.capture(request, capture_id)
        return self._write(request)

    def _queued(self, **item: Any) -> list[MemoryRecord]:
        # The worker's callable: its items are payloads that submit checked.
        capture_id = item.pop("capture_id", None)
        request = unchecked(item)
        if self._durable is not None:
            return self._durable.capture(request, capture_id)
        return self._write(request)

    def _count_episodes(self, namespace: str, n: int) -> None:
        # Consolidate in the background once a namespace gathers enough new
        # episodes; never on the capturing caller's time.
        self._new_episodes[namespace] += n
        if self._new_episodes[namespace] >= self.policy.consolidate_every > 0:
            self._new_episodes[namespace] = 0
            self._pool.submit(self.consolidate, namespace)

    async def acapture(
        self,
        messages_or_text: Any,
        *,
        namespace: str,
        agent_id: str | None = None,
        thread_id: str | None = None,
        speaker: str | None = None,
        event_time: float | None = None,
        source_ids: Sequence[str] | None = None,
        scope: Scope | str = Scope.PRIVATE,
        capture_id: str | None = None,
    ) -> list[MemoryRecord]:
        """Async twin of :meth:`capture` (runs the store I/O in a worker thread)."""
        return await asyncio.to_thread(
            self.capture,
            messages_or_text,
            namespace=namespace,
            agent_id=agent_id,
            thread_id=thread_id,
            speaker=speaker,
            event_time=event_time,
            source_ids=source_ids,
            scope=scope,
            capture_id=capture_id,
        )

    def submit(
        self,
        messages_or_text: Any,
        *,
        namespace: str,
        dedupe: bool = True,
        **kwargs: Any,
    ) -> int:
        """Queue a turn for capture on the background worker and return at once.

        Args:
            messages_or_text: as for :meth:`capture`.
            namespace: the tenant; required.
            dedupe: skip messages whose id was already submitted (by a node,
                the middleware or the bridging checkpointer).
            **kwargs: the other keyword arguments of :meth:`capture`.

        Returns:
            How many messages were queued (a plain text counts as one).

        Raises:
            ValueError: empty namespace, or an ``event_time`` out of range.
            TypeError: an ``event_time`` that is not a number.
        """
        capture_id = kwargs.pop("capture_id", None)
        request = capture_request(messages_or_text, namespace=namespace, **kwargs)
        item = request.payload()
        if capture_id is not None:
            item["capture_id"] = capture_id  # spooled already
        if isinstance(request.content, str) or not dedupe:
            self.worker.submit(item)
            return 1 if isinstance(request.content, str) else len(request.content)
        return len(self.worker.submit_new(item))

    async def asubmit(
        self,
        messages_or_text: Any,
        *,
        namespace: str,
        dedupe: bool = True,
        **kwargs: Any,
    ) -> int:
        """Async twin of :meth:`submit` (a spool's fsync runs off the event loop)."""
        return await asyncio.to_thread(
            functools.partial(
                self.submit,
                messages_or_text,
                namespace=namespace,
                dedupe=dedupe,
                **kwargs,
            )
        )

    # -- read --------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        namespace: str,
        budget_tokens: int | None = None,
        k: int | None = None,
        explain: bool = False,
        agent_id: str | None = None,
        context: Sequence[str] = (),
        include_experience: bool = False,
        timeout: float | None | DefaultTimeout = DEFAULT_TIMEOUT,
    ) -> RecallResult:
        """Recall memories relevant to ``query``, fitted to a token budget.

        Args:
            query: the question or the user's latest message.
            namespace: the tenant to search; nothing outside it is ever returned.
            budget_tokens: size of the rendered block (ceil(chars/4) tokens).
            k: how many memories at most; sized to the query when ``None``.
            explain: attach per-path scores and why others were cut.
            agent_id: the reading agent (private memories of others stay hidden).
            context: recent messages, used to extract extra probes.
            include_experience: also return unconfirmed experience lessons.
            timeout: seconds before giving up with an empty result (``None``:
                wait; :data:`DEFAULT_TIMEOUT`: the policy's ``recall_timeout_s``).

        Returns:
            A :class:`RecallResult`; empty (with ``timed_out``) past the deadline.
        """
        request = recall_request(
            query,
            namespace=namespace,
            budget_tokens=(
                self.policy.default_budget_tokens
                if budget_tokens is None
                else budget_tokens
            ),
            now=self.clock(),
            k=k,
            explain=explain,
            agent_id=agent_id,
            context=context,
            include_experience=include_experience,
        )
        limit = self.policy.recall_timeout_s if timeout is DEFAULT_TIMEOUT else timeout
        with telemetry.memory_span(
            telemetry.RECALL,
            telemetry.SEARCH_MEMORY,
            namespace=namespace,
            agent=agent_id or "",
            budget_tokens=request.budget_tokens,
            k=k,
            timeout_s=limit,
            **{
                "input.value": query,
                "gen_ai.retrieval.query.text": query,
                "gen_ai.data_source.id": self.backend.capabilities.name,
            },
        ) as span:
            if limit is None:
                result = self._searcher.recall(request)
            else:
                result = self._recall_with_deadline(request, limit, span)
            self._searcher.annotate(span, result)
            return result

    def _recall_with_deadline(
        self, request: RecallRequest, limit: float, span: Any
    ) -> RecallResult:
        # The worker thread must see the recall span as its parent: copy the
        # caller's context (executors do not carry contextvars over).
        ctx = contextvars.copy_context()
        future = self._recall_pool.submit(ctx.run, self._searcher.recall, request)
        try:
            return future.result(timeout=limit)
        except FutureTimeout:
            telemetry.degrade(
                telemetry.TIMEOUT,
                f"recall took longer than {limit} s; the turn goes on without memories",
                span,
                timeout_s=limit,
                namespace=request.namespace,
            )
            return RecallResult(
                query=request.query,
                memories=[],
                budget_tokens=request.budget_tokens,
                timed_out=True,
            )

    async def arecall(
        self,
        query: str,
        *,
        namespace: str,
        budget_tokens: int | None = None,
        k: int | None = None,
        explain: bool = False,
        agent_id: str | None = None,
        context: Sequence[str] = (),
        include_experience: bool = False,
        timeout: float | None | DefaultTimeout = DEFAULT_TIMEOUT,
    ) -> RecallResult:
        """Async twin of :meth:`recall`."""
        # Not asyncio.to_thread: the loop's default executor has cpu+4 threads,
        # and turns queued there would spend their deadline waiting.
        call = functools.partial(
            self.recall,
            query,
            namespace=namespace,
            budget_tokens=budget_tokens,
            k=k,
            explain=explain,
            agent_id=agent_id,
            context=context,
            include_experience=include_experience,
            timeout=timeout,
        )
        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._caller_pool, ctx.run, call)

    def get(self, namespace: str, memory_id: str) -> MemoryRecord | None:
        """One memory by id (any status), or ``None``."""
        rows = self._reads.get(check_namespace(namespace), [memory_id])
        return rows[0] if rows else None

    def list_memories(
        self,
        namespace: str,
        *,
        history: bool = False,
        kinds: Sequence[str] = (),
        agent_id: str | None = None,
        thread_id: str | None = None,
        limit: int = 1000,
    ) -> list[MemoryRecord]:
        """Memories of a namespace, newest first; ``history=True`` adds superseded,
        cold and archived ones."""
        statuses = _ALL_STATUSES if history else ("active",)
        where = Where(
            statuses=statuses, kinds=tuple(kinds), reader=agent_id, thread_id=thread_id
        )
        return self._reads.query(check_namespace(namespace), where, limit=limit)

    def edges(self, namespace: str, memory_id: str) -> list[Edge]:
        """Edges touching one memory."""
        return self._reads.edges(check_namespace(namespace), [memory_id])

    def audit(self, namespace: str, memory_id: str | None = None) -> list[AuditEntry]:
        """The audit trail of a namespace or of one memory, oldest first."""
        return self._reads.audit(check_namespace(namespace), memory_id)

    def stats(self, namespace: str) -> dict[str, Any]:
        """Counts by status, kind and tier, plus edges-free totals."""
        rows = self.list_memories(namespace, history=True, limit=100_000)
        return {
            "namespace": namespace,
            "total": len(rows),
            "by_status": dict(Counter(r.status.value for r in rows)),
            "by_kind": dict(Counter(r.kind.value for r in rows)),
            "by_tier": dict(Counter(r.tier.value for r in rows)),
            "embedder": self.embedder.model_id,
            "backend": self.backend.capabilities.name,
        }

    def namespaces(self) -> list[str]:
        """Every namespace holding memories."""
        return self._reads.namespaces()

    # -- reads for adapters: the store's filters, traced, namespace checked --

    @functools.cached_property
    def _reads(self) -> MemoryBackend:
        # The store with a span per call, as recall and capture see it.
        return traced(self.backend)

    def get_many(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Memories by id (any status), in no set order; unknown ids are left out."""
        return self._reads.get(check_namespace(namespace), list(ids), vectors=vectors)

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Memories of a namespace matching ``where``, newest event first."""
        ns = check_namespace(namespace)
        return self._reads.query(ns, where, limit=limit, vectors=vectors)

    def count(self, namespace: str, where: Where | None = None) -> int:
        """How many memories of a namespace match ``where`` (default: the active)."""
        return self._reads.count(check_namespace(namespace), where or Where())

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        """Add entries to a namespace's audit trail, under the namespace's lock."""
        ns = check_namespace(namespace)
        with self._locks.namespace(ns):
            self._reads.append_audit(ns, list(entries))

    # -- lifecycle (delegated to self.lifecycle) ----------------------------

    def update(
        self,
        namespace: str,
        memory_id: str,
        *,
        expected_version: int | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        """Change fields of a memory, with compare-and-swap on its version.

        See :meth:`Lifecycle.update <hindsight_lg.memory.lifecycle.Lifecycle.update>`.
        """
        return self.lifecycle.update(
            namespace, memory_id, expected_version=expected_version, **changes
        )

    async def aupdate(
        self,
        namespace: str,
        memory_id: str,
        *,
        expected_version: int | None = None,
        **changes: Any,
    ) -> MemoryRecord:
        """Async twin of :meth:`update`."""
        return await asyncio.to_thread(
            self.update,
            namespace,
            memory_id,
            expected_version=expected_version,
            **changes,
        )

    def remember(
        self,
        content: str,
        *,
        namespace: str,
        kind: Kind | str = Kind.FACT,
        importance: float | None = None,
        confidence: float | None = None,
        agent_id: str | None = None,
        scope: Scope | str = Scope.PRIVATE,
        meta: dict[str, Any] | None = None,
        source_ids: Sequence[str] | None = None,
        entities: Sequence[str] = (),
        tier: Tier | str | None = None,
        source_kind: SourceKind | str = SourceKind.AGENT_INFERRED,
    ) -> MemoryRecord:
        """Write one memory as given, without extraction, merging or supersession.

        See :meth:`Lifecycle.remember <hindsight_lg.memory.lifecycle.Lifecycle.remember>`.
        """
        return self.lifecycle.remember(
            content,
            namespace=namespace,
            kind=kind,
            importance=importance,
            confidence=confidence,
            agent_id=agent_id,
            scope=scope,
            meta=meta,
            source_ids=source_ids,
            entities=entities,
            tier=tier,
            source_kind=source_kind,
        )

    async def aremember(
        self,
        content: str,
        *,
        namespace: str,
        kind: Kind | str = Kind.FACT,
        importance: float | None = None,
        confidence: float | None = None,
        agent_id: str | None = None,
        scope: Scope | str = Scope.PRIVATE,
        meta: dict[str, Any] | None = None,
        source_ids: Sequence[str] | None = None,
        entities: Sequence[str] = (),
        tier: Tier | str | None = None,
        source_kind: SourceKind | str = SourceKind.AGENT_INFERRED,
    ) -> MemoryRecord:
        """Async twin of :meth:`remember`."""
        return await asyncio.to_thread(
            self.remember,
            content,
            namespace=namespace,
            kind=kind,
            importance=importance,
            confidence=confidence,
            agent_id=agent_id,
            scope=scope,
            meta=meta,
            source_ids=source_ids,
            entities=entities,
            tier=tier,
            source_kind=source_kind,
        )

    def put_record(
        self,
        record: MemoryRecord,
        *,
        op: str = "create",
        detail: dict[str, Any] | None = None,
    ) -> MemoryRecord:
        """Store a record as given, replacing one with the same id.

        For adapters that build records themselves (``HindsightStore``): the
        write is embedded when ``record.dense`` is empty, locked, traced and
        audited like any other.
        """
        return self.lifecycle.put(record.namespace, record, op=op, detail=detail)

    def reinforce(self, namespace: str, ids: Sequence[str]) -> list[MemoryRecord]:
        """Mark memories as successfully used: stronger, longer-lived, more important."""
        return self.lifecycle.reinforce(namespace, ids)

    def weaken(
        self, namespace: str, ids: Sequence[str], factor: float = 0.5
    ) -> list[MemoryRecord]:
        """Mark memories as misleading: less important, less trusted, faster fading."""
        return self.lifecycle.weaken(namespace, ids, factor)

    def restore(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Bring a cold or archived memory back to active."""
        return self.lifecycle.restore(namespace, memory_id)

    async def arestore(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Async twin of :meth:`restore`."""
        return await asyncio.to_thread(self.restore, namespace, memory_id)

    def correct(
        self,
        namespace: str,
        memory_id: str,
        text: str,
        *,
        factors: CorrectionFactors | None = None,
    ) -> Correction:
        """Replace a memory by a person's correction, keeping the old one as history.

        The text becomes a new user-confirmed memory that supersedes the old
        one (``supersedes`` edge), with raised importance; memories on the same
        topic lose a little importance (bounded: see
        :class:`~hindsight_lg.memory.lifecycle.CorrectionFactors`). Every change
        is a compare-and-swap that re-reads and retries on a concurrent write.

        Args:
            namespace: the tenant.
            memory_id: the memory that is wrong.
            text: what is true instead.
            factors: the correction's bounded factors (defaults documented).

        Returns:
            A :class:`~hindsight_lg.memory.lifecycle.Correction`.

        Raises:
            KeyError: no such memory.
            ValueError: empty text, or the memory is already superseded.
        """
        return self.lifecycle.correct(namespace, memory_id, text, factors)

    async def acorrect(
        self,
        namespace: str,
        memory_id: str,
        text: str,
        *,
        factors: CorrectionFactors | None = None,
    ) -> Correction:
        """Async twin of :meth:`correct`."""
        return await asyncio.to_thread(
            self.correct, namespace, memory_id, text, factors=factors
        )

    def confirm_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Verify an unconfirmed experience lesson: it joins ordinary recall."""
        return self.lifecycle.confirm_lesson(namespace, memory_id)

    async def aconfirm_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Async twin of :meth:`confirm_lesson`."""
        return await asyncio.to_thread(self.confirm_lesson, namespace, memory_id)

    def reject_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Archive an experience lesson as wrong; it is never recalled."""
        return self.lifecycle.reject_lesson(namespace, memory_id)

    async def areject_lesson(self, namespace: str, memory_id: str) -> MemoryRecord:
        """Async twin of :meth:`reject_lesson`."""
        return await asyncio.to_thread(self.reject_lesson, namespace, memory_id)

    def decay(
        self, namespace: str | None = None, now: float | None = None
    ) -> dict[str, int]:
        """Move weak memories to cold and weak cold ones to archived.

        See :meth:`Lifecycle.decay <hindsight_lg.memory.lifecycle.Lifecycle.decay>`.
        """
        return self.lifecycle.decay(namespace, now)

    def consolidate(
        self,
        namespace: str,
        *,
        params: ClusterParams | None = None,
        progress: Progress | None = None,
    ) -> list[MemoryRecord]:
        """Cluster active episodes into semantic memories; episodes go cold."""
        return self.lifecycle.consolidate(namespace, params=params, progress=progress)

    async def aconsolidate(
        self,
        namespace: str,
        *,
        params: ClusterParams | None = None,
        progress: Progress | None = None,
    ) -> list[MemoryRecord]:
        """Async twin of :meth:`consolidate`."""
        return await asyncio.to_thread(
            self.consolidate, namespace, params=params, progress=progress
        )

    def forget(
        self,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        thread_id: str | None = None,
    ) -> int:
        """Delete memories for real, with their edges and audit content.

        Forgetting a namespace or a thread also cancels its captures still
        queued for the background worker or waiting in the spool (the
        spool file is rewritten without them), removes edges of entity nodes
        only the forgotten memories used, and, for a thread, the audit
        entries of its turns that were not promoted to memories.

        Args:
            namespace: the tenant.
            ids: memories to delete; ``None`` with no ``thread_id`` deletes the
                whole namespace (right to be forgotten).
            thread_id: delete the memories captured from this thread.

        Returns:
            How many memories were deleted.
        """
        check_namespace(namespace)
        with self._locks.namespace(namespace):  # no capture of it runs meanwhile
            if ids is None:
                self._cancel_captures(namespace, thread_id)
            return self.lifecycle.forget(namespace, ids, thread_id=thread_id)

    def _cancel_captures(self, namespace: str, thread_id: str | None) -> None:
        self.worker.cancel(namespace, thread_id)
        if self.spool is not None:
            self.spool.purge(namespace, thread_id)
        if self._group is not None:
            # Staged captures reach the store (to be deleted with the rest)
            # and their markers are written now, before the audit is purged.
            self._group.sync()

    async def aforget(
        self,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        thread_id: str | None = None,
    ) -> int:
        """Async twin of :meth:`forget`."""
        return await asyncio.to_thread(self.forget, namespace, ids, thread_id=thread_id)

    # -- lifecycle of the object -------------------------------------------

    def flush(self) -> None:
        """Wait for queued captures, then make every write durable and searchable."""
        self.worker.flush()
        if self._group is not None:
            self._group.sync()
        self.backend.flush()

    async def aflush(self) -> None:
        """Async twin of :meth:`flush`."""
        await asyncio.to_thread(self.flush)

    def close(self) -> None:
        """Drain queued captures, stop workers, close the backend if owned."""
        if self._closed:
            return
        self._closed = True
        self.worker.close()
        self._pool.shutdown(wait=True)
        self._caller_pool.shutdown(wait=True)
        self._recall_pool.shutdown(wait=True)
        if self._group is not None:
            self._group.settle()
        self._release_shares()
        if self._backend_key is not None:
            if release(self._backend_key):
                self._store.close()
            self._backend_key = None
        elif self._owns_backend:
            self._store.close()
        else:
            self._store.flush()

    def _release_shares(self) -> None:
        for key, close in self._shares:
            if release(key):
                close()
        self._shares = []

    def __enter__(self) -> HindsightMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def aclose(self) -> None:
        """Async twin of :meth:`close` (drains captures off the event loop)."""
        await asyncio.to_thread(self.close)

    async def __aenter__(self) -> HindsightMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
