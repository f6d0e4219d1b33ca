"""LangGraph's TTL on :class:`~hindsight_lg.store.HindsightStore` items.

An item put with ``ttl`` (minutes) keeps ``ttl`` and ``expires_at`` (POSIX
seconds) in its stored metadata (:mod:`hindsight_lg._items`). An expired item
is invisible at once (the store's reads check :func:`expires_at`) and deleted
for real by :func:`sweep`. A read with ``refresh_ttl`` pushes the expiry back
(:func:`refresh`), at most once per tenth of the TTL: a refresh is a write,
with its audit entry.

Stored metadata may come from an import or an older version: a value that is
no finite number is no expiry, never an error on a read.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from hindsight_lg._items import item_meta
from hindsight_lg.backends import Where
from hindsight_lg.memory import HindsightMemory
from hindsight_lg.model import MemoryRecord

ALL = 10**7  # "every record" as a query limit


def expiry(ttl: float | None, now: float) -> dict[str, Any]:
    """The stored ``ttl`` and ``expires_at`` of an item put at ``now``."""
    if ttl is None:
        return {"ttl": None, "expires_at": None}
    return {"ttl": float(ttl), "expires_at": now + float(ttl) * 60.0}


def _number(value: Any) -> float | None:
    """A finite number from stored metadata, ``None`` for anything else."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def expires_at(stored: dict[str, Any]) -> float | None:
    """An item's expiry; a value that is no number (a damaged import) is none."""
    return _number(stored.get("expires_at"))


def refresh(memory: HindsightMemory, records: Sequence[MemoryRecord]) -> None:
    """Push back the expiry of items that have a TTL.

    At most once per tenth of an item's TTL: a refresh is a write (with its
    audit entry), and one per read made 300 reads of an item cost 300
    writes. An item read in the meantime thus expires at most a tenth of its
    TTL earlier than a refresh on every read would make it.
    """
    now = memory.clock()
    for record in records:
        stored = item_meta(record)
        ttl = _number(stored.get("ttl")) if stored is not None else None
        if stored is None or ttl is None:
            continue
        expires = expires_at(stored)
        if expires is not None and expires - now >= 0.9 * ttl * 60.0:
            continue  # refreshed recently enough
        if not record.dense:
            record = memory.get_many(record.namespace, [record.id], vectors=True)[0]
            stored = item_meta(record) or stored
        stored.update(expiry(stored["ttl"], now))
        record.version += 1
        memory.put_record(record, op="store_refresh_ttl")


def sweep(memory: HindsightMemory) -> int:
    """Delete expired items for real; returns how many were deleted."""
    now, deleted = memory.clock(), 0
    for tenant in memory.namespaces():
        expired = [
            r.id
            for r in memory.query(tenant, Where(statuses=()), limit=ALL)
            if (expires := expires_at(item_meta(r) or {})) is not None
            and expires <= now
        ]
        if expired:
            deleted += memory.forget(tenant, expired)
    return deleted
