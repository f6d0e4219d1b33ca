"""Store items as memory records: ids, stored values, order, LangGraph's filters.

What :class:`~hindsight_lg.store.HindsightStore` keeps in ``record.meta["store"]``
(the namespace tuple, key, value, whether it is indexed, its write order and its
expiry), read back here; and LangGraph's filter semantics (equality, nested
dicts, ``$eq``/``$ne``/``$gt``/``$gte``/``$lt``/``$lte``), which the memory
tools share.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Literal

from hindsight_lg.model import STORE_META, MemoryRecord, store_item_id

META = STORE_META

Origin = Literal["app", "captured"]
ORIGIN = "$origin"
"""The filter key that picks one side of a namespace: ``"app"`` or ``"captured"``.

A ``$`` name because every other top-level filter key is a field of the items'
values: ``origin`` is a plausible field of an app's own, and reserving it would
change what an app's ``filter={"origin": ...}`` means.
"""
ORIGINS: tuple[Origin, ...] = ("app", "captured")


def item_id(tenant: str, key: str) -> str:
    """The stable memory id of a store item (import derives the same one)."""
    return store_item_id(tenant, key)


def _apply(value: Any, op: str, expected: Any) -> bool:
    try:
        return bool(
            {
                "$eq": lambda: value == expected,
                "$ne": lambda: value != expected,
                "$gt": lambda: value > expected,
                "$gte": lambda: value >= expected,
                "$lt": lambda: value < expected,
                "$lte": lambda: value <= expected,
            }[op]()
        )
    except TypeError:
        return False
    except KeyError:
        raise ValueError(f"unsupported filter operator {op!r}") from None


_OPERATORS = frozenset({"$eq", "$ne", "$gt", "$gte", "$lt", "$lte"})


def check_filter(where: Any, depth: int = 0) -> None:
    """Refuse a filter :func:`matches` cannot apply, before any search.

    Raises:
        ValueError: not a mapping, a key that is not a string, an operator
            other than ``$eq``/``$ne``/``$gt``/``$gte``/``$lt``/``$lte``, or
            nesting deeper than 8 levels.
    """
    if where is None:
        return
    if not isinstance(where, Mapping) or depth > 8:
        raise ValueError("a filter is an object of field: value (at most 8 deep)")
    for key, expected in where.items():
        if not isinstance(key, str):
            raise ValueError(f"filter keys are field names, not {key!r}")
        if isinstance(expected, Mapping) and any(
            isinstance(k, str) and k.startswith("$") for k in expected
        ):
            wrong = [k for k in expected if k not in _OPERATORS]
            if wrong:
                raise ValueError(
                    f"unsupported filter operator {wrong[0]!r}: use one of "
                    + ", ".join(sorted(_OPERATORS))
                )
        elif isinstance(expected, Mapping):
            check_filter(expected, depth + 1)


def matches(value: Mapping[str, Any], where: Mapping[str, Any] | None) -> bool:
    """LangGraph filter semantics: equality, nested dicts, ``$eq``/``$ne``/``$gt``..."""
    for key, expected in (where or {}).items():
        actual = value.get(key)
        if isinstance(expected, Mapping) and any(k.startswith("$") for k in expected):
            if not all(_apply(actual, op, v) for op, v in expected.items()):
                return False
        elif isinstance(expected, Mapping):
            if not isinstance(actual, Mapping) or not matches(actual, expected):
                return False
        elif actual != expected:
            return False
    return True


def item_meta(record: MemoryRecord) -> dict[str, Any] | None:
    """What the store kept about an item, ``None`` for a captured memory."""
    kept = record.meta.get(META)
    return kept if isinstance(kept, dict) else None


def origin_of(record: MemoryRecord) -> Origin:
    """``"app"`` for an item put through the store, else ``"captured"``."""
    return "app" if item_meta(record) is not None else "captured"


def split_origin(
    where: Mapping[str, Any] | None,
) -> tuple[Origin | None, dict[str, Any] | None]:
    """The origin a search filter asks for (``None``: both) and the rest of it.

    Raises:
        ValueError: the ``$origin`` value is not ``"app"`` or ``"captured"``.
    """
    if not where or ORIGIN not in where:
        return None, dict(where) if where else None
    wanted = where[ORIGIN]
    if not isinstance(wanted, str) or wanted not in ORIGINS:
        raise ValueError(
            f'filter {{"{ORIGIN}": ...}} takes "app" (items put through the store) '
            f'or "captured" (memories the engine holds), not {wanted!r}; '
            f"leave it out for both"
        )
    rest = {k: v for k, v in where.items() if k != ORIGIN}
    return ("app" if wanted == "app" else "captured"), rest or None


def value_of(record: MemoryRecord) -> dict[str, Any]:
    """The item's value: as put, or a captured memory's main fields."""
    stored = item_meta(record)
    if stored is not None:
        return dict(stored["value"])
    return record_fields(record)


def record_fields(record: MemoryRecord) -> dict[str, Any]:
    """A memory's main fields, as filters match them."""
    return {
        "content": record.content,
        "kind": record.kind.value,
        "importance": record.importance,
        "confidence": record.confidence,
        "agent_id": record.agent_id,
        "thread_id": record.thread_id,
        "status": record.status.value,
    }


def write_order(record: MemoryRecord) -> tuple[int, int]:
    """(namespace order, key order): when each was first written."""
    kept = item_meta(record) or {}
    own = int(kept.get("seq", record.created_at * 1e9))
    return int(kept.get("ns_seq", own)), own


def when(ts: float) -> datetime:
    """POSIX seconds as an aware UTC datetime (what LangGraph items carry)."""
    return datetime.fromtimestamp(ts, UTC)


class WriteSequence:
    """Increasing write numbers (nanosecond clock, never repeating)."""

    def __init__(self) -> None:
        self._last = 0
        self._lock = threading.Lock()

    def next(self) -> int:
        with self._lock:
            self._last = max(self._last + 1, time.time_ns())
            return self._last
