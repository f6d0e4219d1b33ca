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
    >>> slots.adapter_state(Seen) is slots.adapter_state(Seen)
    True
"""

from __future__ import annotations

import threading
from typing import TypeVar, cast

T = TypeVar("T")


class AdapterSlots:
    """One instance per class of adapter state, made on first use (see module)."""

    _slots_lock = threading.Lock()  # guards only the first use of each object's map

    def adapter_state(self, kind: type[T]) -> T:
        """The one ``kind`` this engine keeps for its adapters (``kind()`` at first).

        Engines share nothing here: two engines on one store each keep their
        own, as each is one agent's memory with its own runs.

        Args:
            kind: a class whose constructor takes no arguments.
        """
        with AdapterSlots._slots_lock:
            slots: dict[type, object] = self.__dict__.setdefault("_adapter_slots", {})
            found = slots.get(kind)
            if found is None:
                found = slots[kind] = kind()
            return cast(T, found)
