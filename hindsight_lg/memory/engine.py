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
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Final

from hindsight_lg.backends import (
    MemoryBackend,
    Where,
    check_namespace,
    open_backend,
    read_cache_of,
)
from hindsight_lg.embeddings import Embedder, Reranker, default_embedder
from hindsight_lg.memory._lifecycle_methods import LifecycleMethods
from hindsight_lg.memory._opening import OpensOnFirstUse
from hindsight_lg.memory._slots import AdapterSlots
from hindsight_lg.memory._traced import traced
from hindsight_lg.memory._twins import in_thread
from hindsight_lg.memory._wiring import open_parts, open_uri
from hindsight_lg.memory.durability import Spool
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import RecallResult
from hindsight_lg.memory.recall.wake import WakeRule
from hindsight_lg.memory.requests import (
    capture_request,
    recall_request,
)
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    MemoryRecord,
    Scope,
    now_ts,
)

_ALL_STATUSES = ("active", "cold", "superseded", "archived")
_WARM_UP_NAMESPACE = "hindsight-warm-up"  # searched once at open; holds nothing


class DefaultTimeout(enum.Enum):
    """The type of :data:`DEFAULT_TIMEOUT`."""

    TIMEOUT = "the policy's recall_timeout_s"


#: ``recall(timeout=DEFAULT_TIMEOUT)``: the policy's ``recall_timeout_s``.
DEFAULT_TIMEOUT: Final = DefaultTimeout.TIMEOUT


class HindsightMemory(LifecycleMethods, AdapterSlots, OpensOnFirstUse):
    """Long-term memory for agents: capture turns, recall by association.

    Args:
        backend: where memories live (:class:`~hindsight_lg.backends.milvus.MilvusBackend`
            or the in-memory reference backend).
        embedder: dense embedding model. ``None``: the model the store
            records (a store opened again keeps its model), or for a new
            store :func:`~hindsight_lg.embeddings.default_embedder`'s choice.
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

    Construction stores what it is given and does no I/O. The parts (read
    cache, spool and group commit, writer, searcher, lifecycle, locks,
    threads, the background worker) are built in ``memory/_wiring.py``, which
    also sets the store up and replays the spool, at the first call that
    needs them or at :meth:`setup`; :meth:`from_uri` opens them at once. So a
    locked store, an embedder that differs from the store's or a spool
    another process holds raises at that first call (and at each later one
    while it lasts: a failed opening keeps nothing and is tried again). See
    ``memory/_opening.py``.

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
        self._defer(
            functools.partial(
                open_parts,
                backend,
                embedder,
                policy=policy,
                llm=llm,
                reranker=reranker,
                clock=clock,
                owns_backend=owns_backend,
                cache=cache,
                spool=spool,
            ),
            owned=backend if owns_backend else None,
        )

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

        With no ``embedder``, a store that exists is opened with the model it
        records (``hashing-128`` after ``reembed --to hashing-128``, MiniLM,
        bge-m3...); a new store gets the default one. When this machine lacks
        the recorded model, work that embeds nothing still runs, and the
        first embedding (the warm-up, unless ``warm_up=False``) raises
        :class:`~hindsight_lg.errors.ModelNotAvailable` naming the model.
        An ``embedder`` that differs from the store's raises
        :class:`~hindsight_lg.errors.EmbeddingMismatch`.
        """
        # No embedder named: the store's own is adopted once it is open.
        chosen = None if embedder is None else default_embedder(embedder)
        parts = open_uri(
            uri, chosen, token=token, prefix=prefix, open_store=open_backend, **kwargs
        )
        memory = cls._of_parts(parts)  # opened: nothing left to do at first use
        if warm_up:
            try:
                memory.warm_up()
            except BaseException:
                memory.close()  # a model that cannot load leaves nothing open
                raise
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
        """Create collections and check the embedding model; idempotent.

        An engine built by hand opens here if no call opened it yet (see the
        class notes).
        """
        parts, opened_now = self._open()
        if not opened_now:  # opening set the store up already
            parts.setup()

    asetup = in_thread(setup)

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
        # One whole recall of an empty tenant: it loads the model and the
        # search index, and builds the query readers' tables (about 0.15 s),
        # which a first recall would otherwise build inside its deadline.
        self.recall("warm up", namespace=_WARM_UP_NAMESPACE, timeout=None)
        self._searcher.rules()  # measured on the embedder now, not at a recall
        if read_cache_of(self._store) is None:
            return  # no read cache (cache=False): nothing to load ahead
        for namespace in namespaces:
            self.backend.count(check_namespace(namespace), Where(statuses=()))

    @property
    def wake_rule(self) -> WakeRule:
        """When a cold memory wakes for a query: floors measured on the embedder.

        See :mod:`hindsight_lg.memory.recall.wake`; measured at the first
        recall (before its deadline starts), or by :meth:`warm_up`.
        """
        return self._searcher.rules()[0]

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
            ValueError: empty namespace, bytes or binary content, an agent or
                thread id over 512 bytes, an unknown scope, or an
                ``event_time`` that is NaN, infinite or outside years 1-9999.
            TypeError: an id or speaker that is not a string, or an
                ``event_time`` that is not a number (``"123"`` included).
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

    acapture = in_thread(capture)

    def submit(
        self,
        /,
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
            ValueError, TypeError: as :meth:`capture` (checked here, by the
                same validator, not on the worker where the caller never
                sees it); nothing was queued.
        """
        capture_id = kwargs.pop("capture_id", None)
        if kwargs.get("event_time") is None:
            # Said now, not when the worker gets to it; the parts of a long
            # turn (see CaptureWorker) share this time like one capture's turns.
            kwargs["event_time"] = self.clock()
        request = capture_request(messages_or_text, namespace=namespace, **kwargs)
        item = request.payload()
        if capture_id is not None:
            item["capture_id"] = capture_id  # spooled already
        if isinstance(request.content, str) or not dedupe:
            self.worker.submit(item)
            return 1 if isinstance(request.content, str) else len(request.content)
        return len(self.worker.submit_new(item))

    asubmit = in_thread(submit)

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
            A :class:`RecallResult`. Past the deadline it has ``timed_out``
            and holds what the recall's dense search found if that search was
            done (a server's search, beside a tenant's load), else nothing.
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
            max_chars=self.policy.max_query_chars,
        )
        limit = self.policy.recall_timeout_s if timeout is DEFAULT_TIMEOUT else timeout
        self._searcher.rules()  # measured once per model, off the deadline
        return self._recall(request, limit)

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
        if self._parts is None:  # a hand-built engine opens off the event loop
            await self.asetup()
        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pools.caller, ctx.run, call)

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

    aforget = in_thread(forget)

    # -- lifecycle of the object -------------------------------------------

    def flush(self) -> None:
        """Wait for queued captures, then make every write durable and searchable."""
        self.worker.flush()
        if self._group is not None:
            self._group.sync()
        self.backend.flush()

    aflush = in_thread(flush)

    def close(self) -> None:
        """Drain queued captures, stop workers, close the backend if owned.

        Before the first use this opens nothing; the engine then refuses calls.
        """
        self._close_parts()

    def __enter__(self) -> HindsightMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    aclose = in_thread(close)

    async def __aenter__(self) -> HindsightMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
