"""What a merged restatement added to a memory, kept so forgetting can take it back.

A restatement (cosine >= ``policy.merge_threshold``, or judged the same
statement) is not stored: it merges into the memory it repeats, which gains
its source ids, entities and participants. The memory keeps one entry per
merge in ``meta["details"]``, with ids and the names it claims, never the
restatement's text::

    {"id": restatement id, "thread_id": "t2", "at": 1700000000.0,
     "source_ids": ["t2:4"], "entities": ["Lena"], "participants": []}

A merge *claims* the values it added, and the values it repeats that an
earlier merge claimed; a value the memory had before any merge is never
claimed. Forgetting a thread (:func:`unmerge`) removes its entries and every
value they claimed that no remaining entry claims, so a name two threads
said goes with the second of them, and the memory's own values stay.

Forgetting finds the memories a thread merged into by an audit entry under
the thread's key (:func:`thread_marker`, op ``merged``), which
``forget(thread_id=...)`` reads and then purges with the thread's other
entries. An entry of an older version is a plain string (the restatement's
text): :func:`merges` skips it, and the next merge or unmerge drops it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hindsight_lg.model import AuditEntry, MemoryRecord, observe_id

DETAILS_KEY = "details"
MERGED_OP = "merged"  # the audit op under the restating thread's key
CLAIMED = ("source_ids", "entities", "participants")
# Bounds on what merging accumulates on one record (the store's document limit).
MERGED_ITEMS = 64

Merge = dict[str, Any]


def merges(record: MemoryRecord) -> list[Merge]:
    """The merge entries of ``record``, oldest first (older text entries skipped)."""
    details = record.meta.get(DETAILS_KEY)
    if not isinstance(details, list):
        return []
    return [d for d in details if isinstance(d, dict)]


def record_merge(old: MemoryRecord, new: MemoryRecord, now: float) -> None:
    """Unite ``new``'s sources and names into ``old`` and note what it claims.

    With more than :data:`MERGED_ITEMS` entries the oldest is taken back
    (:func:`unmerge`), so nothing a merge added is ever left unaccounted for.
    """
    earlier = merges(old)
    entry: Merge = {"id": new.id, "thread_id": new.thread_id, "at": now}
    for name in CLAIMED:
        before: list[str] = list(getattr(old, name))
        said: list[str] = list(getattr(new, name))
        claimed = {v for m in earlier for v in m.get(name, [])}
        after = _united(name, before, said)
        setattr(old, name, after)
        entry[name] = [
            v for v in after if v in said and (v not in before or v in claimed)
        ]
    old.meta[DETAILS_KEY] = [*earlier, entry]
    if len(earlier) >= MERGED_ITEMS:
        oldest = earlier[0]
        unmerge(old, lambda m: m is oldest)


def _united(name: str, before: list[str], added: list[str]) -> list[str]:
    values = list(dict.fromkeys(before + added))
    # Source ids keep the newest; names keep the first ones said.
    return values[-MERGED_ITEMS:] if name == "source_ids" else values[:MERGED_ITEMS]


def unmerge(record: MemoryRecord, gone: Callable[[Merge], bool]) -> list[str]:
    """Take back the merges ``gone`` picks; returns their restatement ids.

    Older text entries are dropped too. The caller bumps the version and
    writes the record when anything changed.
    """
    kept: list[Merge] = []
    dropped: list[Merge] = []
    for entry in merges(record):
        (dropped if gone(entry) else kept).append(entry)
    for name in CLAIMED:
        still = {v for m in kept for v in m.get(name, [])}
        lost = {v for m in dropped for v in m.get(name, [])} - still
        setattr(record, name, [v for v in getattr(record, name) if v not in lost])
    if kept:
        record.meta[DETAILS_KEY] = kept
    else:
        record.meta.pop(DETAILS_KEY, None)
    return [str(m.get("id", "")) for m in dropped]


def has_text(record: MemoryRecord) -> bool:
    """Whether ``record`` still holds merge details of an older version (text)."""
    details = record.meta.get(DETAILS_KEY)
    return isinstance(details, list) and any(not isinstance(d, dict) for d in details)


def merge_detail(new: MemoryRecord, woken: bool) -> dict[str, Any]:
    """The ``merge`` audit entry's detail: ids, never the restatement's text."""
    detail: dict[str, Any] = {
        "from": new.id,
        "thread_id": new.thread_id,
        "source_ids": list(new.source_ids),
    }
    return detail | ({"woken": True} if woken else {})


def thread_marker(
    old: MemoryRecord, new: MemoryRecord, now: float
) -> Sequence[AuditEntry]:
    """The entry that lets forgetting ``new``'s thread find ``old``.

    Written for the thread that ``old`` came from too: a consolidated memory
    is rebuilt, not deleted, when that thread is forgotten.
    """
    if not new.thread_id:
        return []  # no thread to forget: the merge goes with ``old``
    detail = {"into": old.id, "from": new.id}
    key = observe_id(new.thread_id)
    return [AuditEntry(old.namespace, key, MERGED_OP, now, detail)]
