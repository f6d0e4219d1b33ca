"""State the adapters keep once per engine, owned by the engine.

The nodes and the middleware of one engine share what one run recalled (its
run ledger) so reflection at the end of the run can judge it. That state
belongs to the engine they share, not to a process-wide map keyed by the
engine: it lives and dies with the engine object, and the engine needs no
knowledge of what an adapter keeps there. Each kind of state is keyed by its
class, which makes one instance with no arguments on first use; the
engine never imports the adapter that defined the class.

Example:
    >>> class Seen:
    ...     def __init__(self) -> None:
    ...         self.ids: set[str] = set()
    >>> slots = AdapterSlots()
    >>> slots.get(Seen) is slots.get(Seen)
    True
"""

from __future__ import annotations

import threading
from typing import TypeVar, cast

T = TypeVar("T")


class AdapterSlots:
    """One instance per class of adapter state, made on first use (see module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._slots: dict[type, object] = {}

    def get(self, kind: type[T]) -> T:
        """The one ``kind`` kept here, made with ``kind()`` at the first call."""
        with self._lock:
            found = self._slots.get(kind)
            if found is None:
                found = self._slots[kind] = kind()
            return cast(T, found)
