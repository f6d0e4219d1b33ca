"""An engine whose parts open at its first use: the constructor only stores.

``HindsightMemory(backend, ...)`` keeps what it is given and touches nothing:
no store call, no spool file, no thread. The parts (built in
:mod:`hindsight_lg.memory._wiring`, which also sets the store up and replays
the spool) open at the first call that needs them (a capture, a recall, a
read of ``memory.backend``...) or at an explicit ``setup()``.
``HindsightMemory.from_uri`` opens them at once, as LangGraph's savers do I/O
in ``from_conn_string()`` and ``setup()``, so its errors come from it.

The engine holds one :class:`Opening` and reaches every part through
:meth:`Opening.parts`, a typed call: no attribute is looked up by name.

Opening happens once per engine, under the opening's lock: concurrent first
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
from typing import TYPE_CHECKING

from hindsight_lg.memory._parts import EngineParts

if TYPE_CHECKING:
    from hindsight_lg.backends import MemoryBackend

_OPENING_NOTE = "raised while opening this HindsightMemory (at its first use)"


class Opening:
    """An engine's parts, opened by the first call that needs them (see module).

    Args:
        opener: builds and opens the parts; ``None`` when ``parts`` is given.
        owned: the backend to close if the engine closes before its parts
            opened (``owns_backend``; closing one that never connected does
            nothing).
        parts: parts opened already (``from_uri``).
    """

    def __init__(
        self,
        opener: Callable[[], EngineParts] | None,
        owned: MemoryBackend | None = None,
        parts: EngineParts | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._opener = opener
        self._owned = owned
        self._parts = parts
        self._closed = False

    @property
    def opened(self) -> bool:
        """Whether the parts are open (a call needs no opening)."""
        return self._parts is not None

    def parts(self) -> EngineParts:
        """The parts, opened now if they were not (see :meth:`open`)."""
        parts = self._parts
        return parts if parts is not None else self.open()[0]

    def open(self) -> tuple[EngineParts, bool]:
        """The parts, opened now if they were not; ``True`` if this call opened them.

        Raises:
            RuntimeError: the engine was closed before its first use, or
                opening raised an ``AttributeError`` (which, raised while
                reading a part such as ``memory.backend``, would read as a
                missing attribute).
            Exception: whatever opening raised (see module); nothing is kept.
        """
        parts = self._parts
        if parts is not None:
            return parts, False
        with self._lock:
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
            self._parts = parts
            self._opener = self._owned = None  # the parts hold them now
            return parts, True

    def close(self) -> None:
        """Close the parts if they opened; idempotent, and opens nothing."""
        with self._lock:  # waits for an opening under way, then closes it
            if self._closed:
                return
            self._closed = True
            parts, owned = self._parts, self._owned
            self._opener = self._owned = None
        if parts is not None:
            parts.close()
        elif owned is not None:  # never opened (or failed to): nothing else is held
            owned.close()


class UsesParts:
    """The root of the engine's groups of methods: how each reaches the parts.

    ``HindsightMemory`` is its one subclass; it holds an :class:`Opening`
    and its methods (and those of ``ReadMethods`` and ``LifecycleMethods``,
    the groups it is made of) read a part as ``self._parts().searcher``.
    """

    _opening: Opening

    def _parts(self) -> EngineParts:
        """The engine's parts, opened now if no call opened them yet."""
        return self._opening.parts()
