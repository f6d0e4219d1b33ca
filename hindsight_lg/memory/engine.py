"""``HindsightMemory``: the engine users hold. Capture, recall, inspect, close."""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.embeddings import Embedder, Reranker, default_embedder
from hindsight_lg.memory._durable import SpooledCapture
from hindsight_lg.memory._lifecycle_ops import LifecycleOps
from hindsight_lg.memory._recall_paths import Searcher
from hindsight_lg.memory.capture import (
    Extractor,
    Placement,
    Writer,
    to_turns,
)
from hindsight_lg.memory.model import (
    CONTEXT_KEY,
    AuditEntry,
    Edge,
    MemoryRecord,
    Scope,
    now_ts,
)
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import RecallResult
from hindsight_lg.memory.spool import Spool
from hindsight_lg.memory.worker import CaptureWorker, plain_messages
from hindsight_lg.store._traced import traced
from hindsight_lg.store.base import MemoryBackend, Where, check_namespace
from hindsight_lg.store.cached import with_read_cache

_ALL_STATUSES = ("active", "cold", "superseded", "archived")


class HindsightMemory(LifecycleOps):
    """Long-term memory for agents: capture turns, recall by association.

    Args:
        backend: where memories live (:class:`~hindsight_lg.store.milvus.MilvusBackend`
            or the in-memory reference backend).
        embedder: dense embedding model; see :func:`~hindsight_lg.embeddings.default_embedder`.
        policy: every tunable; defaults are the design's seed values.
        llm: optional LangChain chat model for extraction (heuristics without it).
        reranker: optional cross-encoder applied after scoring.
        clock: returns "now" as POSIX seconds; inject one for deterministic tests.
        owns_backend: close the backend in :meth:`close` (``from_uri`` sets it).
        cache: serve reads other than dense search from a write-through
            namespace cache (:mod:`hindsight_lg.store.cached`).
        spool: a :class:`~hindsight_lg.memory.spool.Spool` or its file path:
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
        self.backend = with_read_cache(backend) if cache else backend
        self.embedder = embedder if embedder is not None else default_embedder()
        self.policy = policy or Policy()
        self.llm = llm
        self.reranker = reranker
        self.clock = clock
        self._owns_backend = owns_backend
        # Recall and capture reach the store through a wrapper that gives each
        # store call its own span; self.backend stays the raw backend.
        self._writer = Writer(
            traced(self.backend), self.embedder, self.policy, self._extractor()
        )
        self._searcher = Searcher(
            traced(self.backend), self.embedder, self.policy, reranker
        )
        self._write_lock = threading.RLock()
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="hindsight")
        self.worker = CaptureWorker(self.capture)
        self._new_episodes: Counter[str] = Counter()
        self.setup()
        # With a spool, captures are acknowledged once fsync'd and survive a
        # crash or a store outage; whatever a previous run left is replayed now.
        self.spool = Spool(spool) if isinstance(spool, (str, os.PathLike)) else spool
        self._durable = None if self.spool is None else SpooledCapture(self, self.spool)
        if self._durable is not None:
            self.worker.on_accept = self._durable.accept
            self._durable.replay()

    @classmethod
    def from_uri(
        cls,
        uri: str = "./hindsight.db",
        *,
        embedder: Embedder | str | None = None,
        token: str = "",
        prefix: str = "hindsight",
        **kwargs: Any,
    ) -> HindsightMemory:
        """Open memory at ``uri``: a Milvus Lite file, ``http(s)://`` server, or ``:memory:``.

        The returned memory owns its backend: :meth:`close` closes it.
        """
        chosen = default_embedder(embedder)
        if uri == ":memory:":
            from hindsight_lg.store.memory import InMemoryBackend

            backend: MemoryBackend = InMemoryBackend()
        else:
            from hindsight_lg.store.milvus import MilvusBackend

            backend = MilvusBackend(uri, token=token, prefix=prefix)
        return cls(backend, chosen, owns_backend=True, **kwargs)

    def setup(self) -> None:
        """Create collections and check the embedding model; idempotent."""
        self.backend.setup(dim=self.embedder.dim, model_id=self.embedder.model_id)

    def _extractor(self) -> Extractor | None:
        if self.llm is None:
            return None
        from hindsight_lg.memory.extract import llm_extractor

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
            ValueError: empty namespace, bytes or binary content.
        """
        check_namespace(namespace)
        kwargs: dict[str, Any] = {
            "namespace": namespace,
            "agent_id": agent_id,
            "thread_id": thread_id,
            "speaker": speaker,
            "event_time": self.clock() if event_time is None else event_time,
            "source_ids": source_ids,
            "scope": scope,
        }
        if self._durable is not None:
            payload = self._durable.payload(messages_or_text, **kwargs)
            return self._durable.capture(payload, capture_id)
        return self._capture_now(messages_or_text, **kwargs)

    def _capture_now(
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
    ) -> list[MemoryRecord]:
        turns = to_turns(messages_or_text, speaker, source_ids)
        now = self.clock()
        when = now if event_time is None else float(event_time)
        with (
            telemetry.memory_span(
                telemetry.CAPTURE,
                telemetry.CREATE_MEMORY,
                namespace=namespace,
                agent=agent_id or "",
                turns=len(turns),
                **{
                    "session.id": thread_id,
                    "input.value": "\n".join(t.text for t in turns)[:2000],
                },
            ) as span,
            self._write_lock,
            telemetry.collecting() as steps,
            self._writer.batch(),
        ):
            written = self._writer.capture_turns(
                turns,
                Placement(namespace, agent_id or "", Scope(scope), thread_id or ""),
                when=when,
                now=now,
            )
            span.set_attribute("hindsight.memory_ids", [r.id for r in written])
            telemetry.set_attributes(span, steps)
            self._count_episodes(namespace, len(written))
            return written

    def _count_episodes(self, namespace: str, n: int) -> None:
        # Consolidate in the background once a namespace gathers enough new
        # episodes; never on the capturing caller's time.
        self._new_episodes[namespace] += n
        if self._new_episodes[namespace] >= self.policy.consolidate_every > 0:
            self._new_episodes[namespace] = 0
            self._pool.submit(self.consolidate, namespace)

    async def acapture(
        self, messages_or_text: Any, **kwargs: Any
    ) -> list[MemoryRecord]:
        """Async twin of :meth:`capture` (runs the store I/O in a worker thread)."""
        return await asyncio.to_thread(self.capture, messages_or_text, **kwargs)

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
            ValueError: empty namespace.
        """
        check_namespace(namespace)
        if isinstance(messages_or_text, str):
            text = {"messages_or_text": messages_or_text, "namespace": namespace}
            self.worker.submit({**text, **kwargs})
            return 1
        many = messages_or_text
        if not isinstance(many, (list, tuple)):
            many = [many]
        item: dict[str, Any] = {
            "messages_or_text": plain_messages(many),
            "namespace": namespace,
            **kwargs,
        }
        if not dedupe:
            self.worker.submit(item)
            return len(item["messages_or_text"])
        return len(self.worker.submit_new(item))

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
        timeout: float | None = -1.0,
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
            timeout: seconds before giving up with an empty result (``None``: wait;
                default: the policy's ``recall_timeout_s``).

        Returns:
            A :class:`RecallResult`; empty (with ``timed_out``) past the deadline.
        """
        check_namespace(namespace)
        budget = (
            self.policy.default_budget_tokens
            if budget_tokens is None
            else budget_tokens
        )
        if budget <= 0:
            raise ValueError("budget_tokens must be positive")
        limit = self.policy.recall_timeout_s if timeout == -1.0 else timeout
        call = (
            query,
            namespace,
            budget,
            k,
            explain,
            agent_id,
            tuple(context),
            include_experience,
            self.clock(),
        )
        with telemetry.memory_span(
            telemetry.RECALL,
            telemetry.SEARCH_MEMORY,
            namespace=namespace,
            agent=agent_id or "",
            budget_tokens=budget,
            k=k,
            timeout_s=limit,
            **{
                "input.value": query,
                "gen_ai.retrieval.query.text": query,
                "gen_ai.data_source.id": self.backend.capabilities.name,
            },
        ) as span:
            if limit is None:
                result = self._searcher.recall(*call)
            else:
                result = self._recall_with_deadline(call, limit, span)
            self._searcher.annotate(span, result)
            return result

    def _recall_with_deadline(
        self, call: tuple[Any, ...], limit: float, span: Any
    ) -> RecallResult:
        # The worker thread must see the recall span as its parent: copy the
        # caller's context (executors do not carry contextvars over).
        ctx = contextvars.copy_context()
        future = self._pool.submit(ctx.run, self._searcher.recall, *call)
        try:
            return future.result(timeout=limit)
        except FutureTimeout:
            telemetry.degrade(
                telemetry.TIMEOUT,
                f"recall took longer than {limit} s; the turn goes on without memories",
                span,
                timeout_s=limit,
                namespace=call[1],
            )
            return RecallResult(
                query=call[0], memories=[], budget_tokens=call[2], timed_out=True
            )

    async def arecall(self, query: str, **kwargs: Any) -> RecallResult:
        """Async twin of :meth:`recall`."""
        return await asyncio.to_thread(self.recall, query, **kwargs)

    def get(self, namespace: str, memory_id: str) -> MemoryRecord | None:
        """One memory by id (any status), or ``None``."""
        rows = self.backend.get(check_namespace(namespace), [memory_id])
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
        return self.backend.query(check_namespace(namespace), where, limit=limit)

    def edges(self, namespace: str, memory_id: str) -> list[Edge]:
        """Edges touching one memory."""
        return self.backend.edges(check_namespace(namespace), [memory_id])

    def audit(self, namespace: str, memory_id: str | None = None) -> list[AuditEntry]:
        """The audit trail of a namespace or of one memory, oldest first."""
        return self.backend.audit(check_namespace(namespace), memory_id)

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
        return self.backend.namespaces()

    def forget(
        self,
        namespace: str,
        ids: Sequence[str] | None = None,
        *,
        thread_id: str | None = None,
    ) -> int:
        """Delete memories for real, with their edges and audit content.

        Args:
            namespace: the tenant.
            ids: memories to delete; ``None`` with no ``thread_id`` deletes the
                whole namespace (right to be forgotten).
            thread_id: delete the memories captured from this thread.

        Returns:
            How many memories were deleted.
        """
        check_namespace(namespace)
        with (
            telemetry.memory_span(
                telemetry.FORGET, telemetry.DELETE_MEMORY, namespace=namespace
            ) as span,
            self._write_lock,
        ):
            whole_namespace = ids is None and thread_id is None
            if ids is None:
                where = Where(statuses=(*_ALL_STATUSES, "deleted"), thread_id=thread_id)
                ids = [r.id for r in self.backend.query(namespace, where, limit=10**7)]
            doomed = [] if whole_namespace else self.backend.get(namespace, list(ids))
            # The writer's memo of each thread's last turn may hold what goes.
            self._writer.forget_turns(namespace)
            n = self.backend.delete(namespace, list(ids))
            self.backend.delete_edges(namespace, list(ids))
            self._scrub_turn_context(namespace, doomed)
            self.backend.purge_audit(namespace, None if whole_namespace else list(ids))
            self.backend.flush()
            span.set_attribute("hindsight.count", n)
            return n

    def _scrub_turn_context(
        self, namespace: str, doomed: Sequence[MemoryRecord]
    ) -> None:
        """Drop the lexical context that holds a forgotten memory's words.

        Events carry the rest of their turn, and answers the question they
        answer, as lexical context (``meta["context"]``), so a forgotten
        sentence would live on in other records' index text. Those records
        share its thread and come at or after its time: their context goes
        when it holds the forgotten text or the record is a sibling (same
        time), whose context is the rest of the same turn.
        """
        by_thread: dict[str, list[MemoryRecord]] = {}
        for gone in doomed:
            by_thread.setdefault(gone.thread_id, []).append(gone)
        changed: dict[str, MemoryRecord] = {}
        for thread_id, gone_here in by_thread.items():
            # One read per thread, from its earliest forgotten memory on.
            since = min(g.event_time for g in gone_here)
            where = Where(statuses=_ALL_STATUSES, thread_id=thread_id, since=since)
            for other in self.backend.query(namespace, where, limit=10_000):
                context = other.meta.get(CONTEXT_KEY)
                if isinstance(context, str) and any(
                    _holds(other, context, g) for g in gone_here
                ):
                    changed[other.id] = other
        if not changed:
            return
        full = self.backend.get(namespace, list(changed), vectors=True)
        for record in full:
            record.meta.pop(CONTEXT_KEY, None)
        self.backend.upsert(namespace, full)

    # -- lifecycle of the object -------------------------------------------

    def flush(self) -> None:
        """Wait for queued captures, then make every write durable and searchable."""
        self.worker.flush()
        self.backend.flush()

    def close(self) -> None:
        """Drain queued captures, stop workers, close the backend if owned."""
        self.worker.close()
        self._pool.shutdown(wait=True)
        if self.spool is not None:
            self.spool.close()
        if self._owns_backend:
            self.backend.close()
        else:
            self.backend.flush()

    def __enter__(self) -> HindsightMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _holds(other: MemoryRecord, context: str, gone: MemoryRecord) -> bool:
    """Whether ``other``'s lexical context came from ``gone``'s turn or text."""
    if other.event_time < gone.event_time:
        return False
    return (
        other.event_time == gone.event_time or " ".join(gone.content.split()) in context
    )
