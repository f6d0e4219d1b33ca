"""An engine whose parts open at its first use: the constructor only stores.

``HindsightMemory(backend, ...)`` keeps what it is given and touches nothing:
no store call, no spool file, no thread. The parts (built in
:mod:`hindsight_lg.memory._wiring`, which also sets the store up and replays
the spool) open at the first call that needs them (a capture, a recall, a
read of ``memory.backend``...) or at an explicit ``setup()``.
``HindsightMemory.from_uri`` opens them at once, as LangGraph's savers do I/O
in ``from_conn_string()`` and ``setup()``, so its errors come from it.

Opening happens once per engine, under the engine's lock: concurrent first
calls wait for the one that opens. A failed opening keeps nothing (the
store's handle is let go, so a spool it opened is closed and replayed by the
next try), so every later call tries again and raises the same error while
its cause lasts: a locked store, an embedding model that differs from the
store's, a spool another process holds. The error carries a note that it
was raised while opening the engine. ``close()`` before the first use opens
nothing (it closes a backend the engine owns, which a failed opening may
have connected); such an engine then refuses every call.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from hindsight_lg.memory._wiring import EngineParts

if TYPE_CHECKING:
    from typing import Self

    from hindsight_lg.backends import MemoryBackend
    from hindsight_lg.embeddings import Embedder, Reranker
    from hindsight_lg.memory._locks import WriteLocks
    from hindsight_lg.memory._read import RecallPath
    from hindsight_lg.memory._wiring import Pools
    from hindsight_lg.memory._write import CapturePath
    from hindsight_lg.memory.durability import CaptureWorker, Spool, SpooledCapture
    from hindsight_lg.memory.durability.commit import GroupCommit
    from hindsight_lg.memory.lifecycle import Lifecycle
    from hindsight_lg.memory.policy import Policy
    from hindsight_lg.memory.recall import Searcher

#: The engine's attribute -> the field of :class:`EngineParts` it reads.
FROM_PARTS: Final = {
    "backend": "backend",
    "embedder": "embedder",
    "policy": "policy",
    "llm": "llm",
    "reranker": "reranker",
    "clock": "clock",
    "spool": "spool",
    "worker": "worker",
    "lifecycle": "lifecycle",
    "_store": "store",
    "_group": "group",
    "_searcher": "searcher",
    "_locks": "locks",
    "_durable": "durable",
    "_write": "write",
    "_pools": "pools",
    "_recall": "recall",
}
_OPENING_NOTE = "raised while opening this HindsightMemory (at its first use)"


class OpensOnFirstUse:
    """The engine's parts, opened by the first call that needs them (see module)."""

    # Set from the parts when they open (FROM_PARTS), read as plain attributes.
    backend: MemoryBackend
    embedder: Embedder
    policy: Policy
    llm: Any
    reranker: Reranker | None
    clock: Callable[[], float]
    spool: Spool | None
    worker: CaptureWorker
    lifecycle: Lifecycle
    _store: MemoryBackend
    _group: GroupCommit | None
    _searcher: Searcher
    _locks: WriteLocks
    _durable: SpooledCapture | None
    _write: CapturePath
    _pools: Pools
    _recall: RecallPath

    _parts: EngineParts | None = None
    _opener: Callable[[], EngineParts] | None = None
    _owned: MemoryBackend | None = None
    _closed = False

    def _defer(
        self, opener: Callable[[], EngineParts], owned: MemoryBackend | None
    ) -> None:
        """Keep how to open the parts; nothing is opened (see module).

        Args:
            opener: builds and opens the parts.
            owned: the backend to close if the engine closes before its
                parts opened (``owns_backend``; closing one that never
                connected does nothing).
        """
        self._open_lock = threading.Lock()
        self._opener = opener
        self._owned = owned

    @classmethod
    def _of_parts(cls, parts: EngineParts) -> Self:
        """An engine over parts opened already (``from_uri``)."""
        engine = cls.__new__(cls)
        engine._open_lock = threading.Lock()
        engine._attach(parts)
        return engine

    def _attach(self, parts: EngineParts) -> None:
        for name, field in FROM_PARTS.items():
            # An attribute set by hand before the engine opened is kept, as
            # it would be if set after.
            if name not in self.__dict__:
                setattr(self, name, getattr(parts, field))
        self._parts = parts  # last: a reader that sees it sees every attribute

    def _open(self) -> tuple[EngineParts, bool]:
        """The parts, opened now if they were not; ``True`` if this call opened them.

        Raises:
            RuntimeError: the engine was closed before its first use, or
                opening raised an ``AttributeError`` (which, raised through
                attribute lookup, would read as a missing attribute).
            Exception: whatever opening raised (see module); nothing is kept.
        """
        parts = self._parts
        if parts is not None:
            return parts, False
        with self._open_lock:
            if self._parts is not None:
                return self._parts, False
            if self._closed or self._opener is None:
                raise RuntimeError(
                    "this HindsightMemory was closed before its first use"
                )
            try:
                parts = self._opener()
            except AttributeError as exc:
                raise RuntimeError(f"{_OPENING_NOTE}: {exc!r}") from exc
            except Exception as exc:
                exc.add_note(_OPENING_NOTE)
                raise
            self._attach(parts)
            self._opener = self._owned = None  # the parts hold them now
            return parts, True

    if not TYPE_CHECKING:  # mypy keeps checking attribute names as declared

        def __getattr__(self, name: str) -> Any:
            # Only reached for an attribute not set yet: a part before opening.
            field = FROM_PARTS.get(name)
            if field is None:
                raise AttributeError(
                    f"{type(self).__name__!r} object has no attribute {name!r}",
                    name=name,
                    obj=self,
                )
            return getattr(self._open()[0], field)

    def _close_parts(self) -> None:
        """Close the parts if they opened; idempotent, and opens nothing."""
        with self._open_lock:  # waits for an opening under way, then closes it
            if self._closed:
                return
            self._closed = True
            parts, owned = self._parts, self._owned
            self._opener = self._owned = None
        if parts is not None:
            parts.close()
        elif owned is not None:  # never opened (or failed to): nothing else is held
            owned.close()
