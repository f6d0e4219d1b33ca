"""The engine's reads: recall by association, and reads of what is stored.

``recall`` (and its twin, its warm-up and its wake rule) hands a checked
:class:`~hindsight_lg.memory.requests.RecallRequest` to the engine's
:class:`~hindsight_lg.memory._read.RecallPath`; the other reads (``get``,
``list_memories``, ``query``...) go to the store through the traced view the
parts see, with the namespace checked. They sit in a base class of
:class:`~hindsight_lg.memory.engine.HindsightMemory`, which reaches its
parts through :meth:`~hindsight_lg.memory._opening.UsesParts._parts`; to a
caller they are the engine's own methods.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hindsight_lg.backends import Where, check_namespace, read_cache_of
from hindsight_lg.memory._opening import UsesParts
from hindsight_lg.memory.recall import RecallResult
from hindsight_lg.memory.recall.wake import WakeRule
from hindsight_lg.memory.requests import (
    DEFAULT_TIMEOUT,
    DefaultTimeout,
    recall_request,
)
from hindsight_lg.model import AuditEntry, Edge, MemoryRecord

_ALL_STATUSES = ("active", "cold", "superseded", "archived")
_WARM_UP_NAMESPACE = "hindsight-warm-up"  # searched once at open; holds nothing


class ReadMethods(UsesParts):
    """What :class:`HindsightMemory` reads: recall, and the stored memories."""

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
        parts = self._parts()
        request = recall_request(
            query,
            namespace=namespace,
            budget_tokens=(
                parts.policy.default_budget_tokens
                if budget_tokens is None
                else budget_tokens
            ),
            now=parts.clock(),
            k=k,
            explain=explain,
            agent_id=agent_id,
            context=context,
            include_experience=include_experience,
            max_chars=parts.policy.max_query_chars,
        )
        limit = parts.policy.recall_timeout_s if timeout is DEFAULT_TIMEOUT else timeout
        parts.searcher.rules()  # measured once per model, off the deadline
        return parts.recall(request, limit)

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
        if not self._opening.opened:  # a hand-built engine opens off the event loop
            await asyncio.to_thread(self._opening.open)
        ctx = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._parts().pools.caller, ctx.run, call)

    def get(self, namespace: str, memory_id: str) -> MemoryRecord | None:
        """One memory by id (any status), or ``None``."""
        rows = self._parts().reads.get(check_namespace(namespace), [memory_id])
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
        return self._parts().reads.query(check_namespace(namespace), where, limit=limit)

    def edges(self, namespace: str, memory_id: str) -> list[Edge]:
        """Edges touching one memory."""
        return self._parts().reads.edges(check_namespace(namespace), [memory_id])

    def audit(self, namespace: str, memory_id: str | None = None) -> list[AuditEntry]:
        """The audit trail of a namespace or of one memory, oldest first."""
        return self._parts().reads.audit(check_namespace(namespace), memory_id)

    def stats(self, namespace: str) -> dict[str, Any]:
        """Counts by status, kind and tier, plus edges-free totals."""
        rows = self.list_memories(namespace, history=True, limit=100_000)
        parts = self._parts()
        return {
            "namespace": namespace,
            "total": len(rows),
            "by_status": dict(Counter(r.status.value for r in rows)),
            "by_kind": dict(Counter(r.kind.value for r in rows)),
            "by_tier": dict(Counter(r.tier.value for r in rows)),
            "embedder": parts.embedder.model_id,
            "backend": parts.backend.capabilities.name,
        }

    def namespaces(self) -> list[str]:
        """Every namespace holding memories."""
        return self._parts().reads.namespaces()

    # -- reads for adapters: the store's filters, traced, namespace checked --

    def get_many(
        self, namespace: str, ids: Sequence[str], *, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Memories by id (any status), in no set order; unknown ids are left out."""
        return self._parts().reads.get(
            check_namespace(namespace), list(ids), vectors=vectors
        )

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        """Memories of a namespace matching ``where``, newest event first."""
        ns = check_namespace(namespace)
        return self._parts().reads.query(ns, where, limit=limit, vectors=vectors)

    def count(self, namespace: str, where: Where | None = None) -> int:
        """How many memories of a namespace match ``where`` (default: the active)."""
        return self._parts().reads.count(check_namespace(namespace), where or Where())

    def append_audit(self, namespace: str, entries: Sequence[AuditEntry]) -> None:
        """Add entries to a namespace's audit trail, under the namespace's lock."""
        ns = check_namespace(namespace)
        parts = self._parts()
        with parts.locks.namespace(ns):
            parts.reads.append_audit(ns, list(entries))

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
        parts = self._parts()
        parts.searcher.rules()  # measured on the embedder now, not at a recall
        if read_cache_of(parts.store) is None:
            return  # no read cache (cache=False): nothing to load ahead
        for namespace in namespaces:
            parts.backend.count(check_namespace(namespace), Where(statuses=()))

    @property
    def wake_rule(self) -> WakeRule:
        """When a cold memory wakes for a query: floors measured on the embedder.

        See :mod:`hindsight_lg.memory.recall.wake`; measured at the first
        recall (before its deadline starts), or by :meth:`warm_up`.
        """
        return self._parts().searcher.rules()[0]
