"""``HindsightMemory``: the engine users hold. Capture, recall, inspect, close.

The engine is a facade over its parts (:class:`~._parts.EngineParts`, built
in :mod:`._wiring`): the capture path over a :class:`Writer`, the recall path
over a :class:`Searcher`, a :class:`Lifecycle` (update, decay, consolidate,
forget) and the background worker. It holds them through an
:class:`~._opening.Opening` and reaches each as a typed attribute of
``self._parts()``; every public method is a short delegation to one of them.
This module holds construction, capture and closing; recall and the reads of
stored memories are in :mod:`._read_methods`, the changes to them (update,
remember, correct, forget...) in :mod:`._lifecycle_methods`: stateless base
classes, kept apart so that each module reads at one sitting. Every public
method has an async twin by name (``recall``/``arecall``) that runs the store
I/O in a worker thread.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hindsight_lg.backends import MemoryBackend, open_backend
from hindsight_lg.embeddings import Embedder, Reranker, default_embedder
from hindsight_lg.memory._lifecycle_methods import LifecycleMethods
from hindsight_lg.memory._opening import Opening
from hindsight_lg.memory._read_methods import ReadMethods
from hindsight_lg.memory._slots import AdapterSlots
from hindsight_lg.memory._twins import in_thread
from hindsight_lg.memory._wiring import open_parts, open_uri
from hindsight_lg.memory.durability import CaptureWorker, Spool
from hindsight_lg.memory.lifecycle import Lifecycle
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.requests import (
    DEFAULT_TIMEOUT,
    DefaultTimeout,
    capture_request,
)
from hindsight_lg.model import MemoryRecord, Scope, now_ts

__all__ = ["DEFAULT_TIMEOUT", "DefaultTimeout", "HindsightMemory"]

T = TypeVar("T")


class HindsightMemory(ReadMethods, LifecycleMethods):
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
    ``memory/_opening.py``. The parts are read-only attributes
    (``memory.backend``, ``memory.policy``, ``memory.lifecycle``...).

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
        opener = functools.partial(
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
        )
        self._hold(Opening(opener, owned=backend if owns_backend else None))

    def _hold(self, opening: Opening) -> None:
        # The engine's only state: its parts (opened or not) and the adapters'.
        self._opening = opening
        self._adapters = AdapterSlots()

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
        memory = cls.__new__(cls)  # opened: nothing left to do at first use
        memory._hold(Opening(None, parts=parts))
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
        parts, opened_now = self._opening.open()
        if not opened_now:  # opening set the store up already
            parts.setup()

    asetup = in_thread(setup)

    # -- the parts, read-only ------------------------------------------------

    @property
    def backend(self) -> MemoryBackend:
        """The store, behind the read cache (and the group commit's drain)."""
        return self._parts().backend

    @property
    def embedder(self) -> Embedder:
        """The dense embedding model (the store's own when none was given)."""
        return self._parts().embedder

    @property
    def policy(self) -> Policy:
        """Every tunable."""
        return self._parts().policy

    @property
    def clock(self) -> Callable[[], float]:
        """Returns "now" as POSIX seconds."""
        return self._parts().clock

    @property
    def spool(self) -> Spool | None:
        """The capture spool, if captures are spooled."""
        return self._parts().spool

    @property
    def worker(self) -> CaptureWorker:
        """The background worker: submitted captures and deferred jobs."""
        return self._parts().worker

    @property
    def lifecycle(self) -> Lifecycle:
        """Update, reinforce, decay, consolidate, correct, forget: the I/O."""
        return self._parts().lifecycle

    def adapter_state(self, kind: type[T]) -> T:
        """The one ``kind`` this engine keeps for its adapters (``kind()`` at first).

        Engines share nothing here: two engines on one store each keep their
        own, as each is one agent's memory with its own runs.

        Args:
            kind: a class whose constructor takes no arguments.
        """
        return self._adapters.get(kind)

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
        return self._parts().capture(request, capture_id)

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
        return self._parts().queue(request, capture_id, dedupe)

    asubmit = in_thread(submit)

    # -- lifecycle of the object -------------------------------------------

    def flush(self) -> None:
        """Wait for queued captures, then make every write durable and searchable."""
        self._parts().flush()

    aflush = in_thread(flush)

    def close(self) -> None:
        """Drain queued captures, stop workers, close the backend if owned.

        Before the first use this opens nothing; the engine then refuses calls.
        """
        self._opening.close()

    def __enter__(self) -> HindsightMemory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    aclose = in_thread(close)

    async def __aenter__(self) -> HindsightMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
