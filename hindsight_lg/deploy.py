"""Wiring for LangGraph's server: one memory per process, its store and its saver.

``langgraph dev`` / ``langgraph up`` (and LangSmith Deployment) read
``langgraph.json``, which names a custom long-term store and a custom
checkpointer by import path. Point both here and the server's HTTP store API
(``client.store.put_item`` / ``search_items`` / ``get_item``), its threads and
the graphs it runs all reach the same memory::

    {
      "graphs": {"assistant": "assistant_graph:graph"},
      "store": {"path": "hindsight_lg.deploy.store"},
      "checkpointer": {"path": "hindsight_lg.deploy.checkpointer"}
    }

Use these dotted paths, not ``./file.py:name``: the server loads a store given
by file path into a fresh module object, so a store defined next to the graph
would open a second memory on the same files.

The graph gets the same engine from :func:`memory`. Everything is configured by
environment (the ``env`` block of ``langgraph.json`` or the container's):

- ``HINDSIGHT_URI``: a Milvus Lite file (default ``./hindsight.db``) or a
  Milvus server ``http(s)://host:19530``; ``HINDSIGHT_TOKEN``: its credentials.
- ``HINDSIGHT_SPOOL``: a capture spool file for a server URI (one per
  replica, on a volume that outlives the container); a Lite file has
  ``<file>.spool`` already.
- ``HINDSIGHT_EMBEDDER``: ``hashing``, ``minilm``, ``bge-m3`` or a model path
  (default: the best one installed).
- ``HINDSIGHT_CHAT_MODEL``: an ``init_chat_model`` name (default: an offline
  scripted model, see :func:`chat_model`).
- ``HINDSIGHT_CHECKPOINTS``: where thread state lives behind the bridging saver:
  a SQLite file (default ``./checkpoints.sqlite``) or ``postgresql://...``.
- ``HINDSIGHT_SAVER_CAPTURE``: ``0`` (or ``false``) keeps the saver from
  capturing turns (graphs that capture with their own nodes in a non-private
  scope want this).

Who a run belongs to comes from the run (see :mod:`hindsight_lg.identity`):
with the server's custom auth, the authenticated user.

The server is ready before the embedding model is: :func:`memory` opens the
store and starts loading the model in a background thread, so ``/ok`` and the
assistants answer while it loads. A run that recalls meanwhile waits for what
is left of the load before its recall deadline starts (as the first recall of
any memory measures its rules first), so it does not time out. :func:`warmed`
waits for the load; :func:`on_warm` runs something after it, e.g.
``gc.freeze()`` once the model's objects are alive.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver

from hindsight_lg import telemetry
from hindsight_lg.checkpointers.aio import AsyncHindsightSaver
from hindsight_lg.memory import HindsightMemory, RecallResult
from hindsight_lg.store import HindsightStore

__all__ = [
    "chat_model",
    "checkpointer",
    "close",
    "memory",
    "on_warm",
    "store",
    "warmed",
]

_lock = threading.Lock()
_memory: HindsightMemory | None = None
_WARM_UP_NAMESPACE = "hindsight-warm-up"  # searched while warming; holds nothing
_WARM_UP_QUERY = "What did we agree on for the weekend?"


class _WarmUp:
    """Loads a memory's model and search path in a thread, then runs callbacks.

    Loading MiniLM takes seconds of CPU (importing torch, reading the
    weights); done here, it overlaps the server's own start instead of
    delaying ``/ok``. ``done`` is set once the warm-up and its callbacks are
    over, failed or not, so nothing waiting on it waits forever.
    """

    def __init__(self, engine: HindsightMemory) -> None:
        self.done = threading.Event()
        self._callbacks: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self._stopping = False
        self.thread = threading.Thread(
            target=self._run, args=(engine,), name="hindsight-warm-up", daemon=True
        )

    def stop(self) -> None:
        """The memory is closing: a warm-up still running fails silently."""
        self._stopping = True

    def _run(self, engine: HindsightMemory) -> None:
        log = telemetry.get_logger()
        try:
            engine.warm_up()
            # A whole recall on a tenant that holds nothing: what a first
            # recall builds (the query readers' tables, about 0.15 s) is built
            # here, not inside the first run's deadline (0.2 s by default).
            HindsightMemory.recall(  # the base's: the server's would wait for us
                engine, _WARM_UP_QUERY, namespace=_WARM_UP_NAMESPACE, timeout=None
            )
            log.info("deploy_memory_warm")
        except Exception as exc:  # the first recall raises it again, to its run
            if not self._stopping:
                log.warning("deploy_warm_up_failed", error=str(exc))
        finally:
            self._finish(log)

    def _finish(self, log: Any) -> None:
        while True:  # callbacks added while others run are run too
            with self._lock:
                callbacks, self._callbacks = self._callbacks, []
                if not callbacks:
                    self.done.set()
                    return
            for callback in callbacks:
                try:
                    callback()
                except Exception as exc:
                    log.warning("deploy_on_warm_failed", error=str(exc))

    def then(self, callback: Callable[[], None]) -> None:
        with self._lock:
            if not self.done.is_set():
                self._callbacks.append(callback)
                return
        callback()


class _ServerMemory(HindsightMemory):
    """The server's memory: a recall first waits for the warm-up, off its deadline.

    A run that arrives while the model loads would otherwise start its
    deadline while the warm-up thread still measures the embedder, builds
    the query readers and runs its callbacks (a full garbage collection in
    the templates'), and would come back without memories.
    """

    warming: _WarmUp | None = None

    def recall(self, *args: Any, **kwargs: Any) -> RecallResult:
        warming = self.warming
        if warming is not None and threading.current_thread() is not warming.thread:
            warming.done.wait()
        return super().recall(*args, **kwargs)


_warm_up: _WarmUp | None = None


def memory() -> HindsightMemory:
    """The process-wide memory, opened from the environment on first use.

    The graphs, the store and the saver of one server process share it, so
    its read cache and capture worker are per process, not per request. The
    server closes it at shutdown (see :func:`store`); ``atexit`` is the
    fallback for processes that end otherwise.

    It returns once the store is open; the embedding model and the search
    path load in a background thread (:func:`warmed`), and a recall made
    before they are in waits for them outside its deadline.

    Returns:
        The shared :class:`~hindsight_lg.HindsightMemory`.
    """
    global _memory, _warm_up
    with _lock:
        if _memory is None:
            engine = _ServerMemory.from_uri(
                os.environ.get("HINDSIGHT_URI", "./hindsight.db"),
                embedder=os.environ.get("HINDSIGHT_EMBEDDER") or None,
                token=os.environ.get("HINDSIGHT_TOKEN", ""),
                warm_up=False,
                **_spool(),
            )
            assert isinstance(engine, _ServerMemory)  # from_uri builds cls
            atexit.register(engine.close)
            # The model loads behind the server's start, not in front of it.
            engine.warming = _warm_up = _WarmUp(engine)
            _warm_up.thread.start()
            _memory = engine
        return _memory


def warmed(timeout: float | None = None) -> bool:
    """Wait until :func:`memory`'s model and search path are loaded.

    Args:
        timeout: seconds to wait at most; ``None`` waits for the load.

    Returns:
        Whether the warm-up has finished (also when it failed: the first
        recall then raises the error). ``False`` before :func:`memory`.
    """
    with _lock:
        warming = _warm_up
    return warming is not None and warming.done.wait(timeout)


def on_warm(callback: Callable[[], None]) -> None:
    """Run ``callback`` once :func:`memory`'s warm-up has finished.

    It runs in the warm-up thread, or at once when the warm-up is over. The
    templates freeze the garbage collector there, when the model's objects
    are alive (docs/recall.md, "Timeouts").

    Args:
        callback: called with no arguments, once.

    Example:
        >>> import gc
        >>> from hindsight_lg import deploy
        >>> deploy.on_warm(gc.freeze)  # doctest: +SKIP
    """
    memory()
    with _lock:
        warming = _warm_up
    if warming is not None:  # None: closed meanwhile, nothing left to warm
        warming.then(callback)


def _spool() -> dict[str, Any]:
    # A Lite file gets its spool beside it anyway; a server URI only when asked.
    path = os.environ.get("HINDSIGHT_SPOOL")
    return {"spool": path} if path else {}


def close() -> None:
    """Flush queued captures and close the process-wide memory; idempotent.

    A later :func:`memory` opens a new one (graphs built before keep the old,
    closed engine, so call this only when the process is done serving).
    """
    global _memory, _warm_up
    with _lock:
        engine, _memory = _memory, None
        warming, _warm_up = _warm_up, None
    if warming is not None:
        warming.stop()
    if engine is not None:
        atexit.unregister(engine.close)
        engine.close()
        telemetry.get_logger().info("deploy_memory_closed")


@asynccontextmanager
async def store() -> AsyncIterator[HindsightStore]:
    """The server's long-term store over :func:`memory` (``store.path`` target).

    The server enters it at start-up and leaves it at shutdown, which flushes
    the captures still queued and closes the memory. ``langgraph dev`` and
    uvicorn end on SIGTERM by re-raising the signal, so ``atexit`` would not
    run; this exit does.

    Yields:
        A :class:`~hindsight_lg.store.HindsightStore`.
    """
    engine = await asyncio.to_thread(memory)
    try:
        yield HindsightStore(engine)
    finally:
        await asyncio.to_thread(close)


def _capture_on() -> bool:
    value = os.environ.get("HINDSIGHT_SAVER_CAPTURE", "1").strip().lower()
    return value not in ("0", "false", "no", "off", "")


def _inner_saver(target: str) -> AbstractAsyncContextManager[Any]:
    """The async saver that keeps thread state, opened from a file or a URI."""
    if target.startswith(("postgres://", "postgresql://")):
        try:
            from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        except ImportError:
            raise ImportError("pip install langgraph-checkpoint-postgres") from None
        pooled: AbstractAsyncContextManager[Any] = AsyncPostgresSaver.from_conn_string(
            target
        )
        return pooled
    try:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
    except ImportError:
        raise ImportError("pip install 'hindsight-lg[server]'") from None
    opened: AbstractAsyncContextManager[Any] = AsyncSqliteSaver.from_conn_string(target)
    return opened


@asynccontextmanager
async def checkpointer() -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The bridging saver for the server (``checkpointer.path`` target).

    Thread state goes to SQLite or Postgres (``HINDSIGHT_CHECKPOINTS``); new
    turns flow into :func:`memory` unless ``HINDSIGHT_SAVER_CAPTURE=0``;
    deleting a thread through the API forgets the memories captured from it.
    Leaving it (server shutdown) closes the memory too.

    Yields:
        An :class:`~hindsight_lg.checkpointers.aio.AsyncHindsightSaver`.
    """
    target = os.environ.get("HINDSIGHT_CHECKPOINTS", "./checkpoints.sqlite")
    engine = await asyncio.to_thread(memory)
    try:
        async with _inner_saver(target) as inner:
            if target.startswith("postgres"):
                await inner.setup()
            yield AsyncHindsightSaver(
                inner, engine, capture=_capture_on(), forget_on_delete=True
            )
    finally:
        await asyncio.to_thread(close)


def chat_model(offline: Callable[[], Any] | None = None) -> Any:
    """The model ``HINDSIGHT_CHAT_MODEL`` names, else an offline scripted one.

    Args:
        offline: builds the offline model; default a fake chat model that
            answers by quoting the memories it was given.

    Returns:
        A LangChain chat model.
    """
    name = os.environ.get("HINDSIGHT_CHAT_MODEL")
    if name:
        from langchain.chat_models import init_chat_model

        return init_chat_model(name)
    if offline is not None:
        return offline()
    from hindsight_lg.chat import FakeToolChatModel, echo_memories

    return FakeToolChatModel(respond=echo_memories)
