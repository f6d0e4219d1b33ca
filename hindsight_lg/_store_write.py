"""The write side of :class:`~hindsight_lg.store.HindsightStore`: a put as a record.

An item becomes one memory record of its namespace's tenant, with id
``item_id(tenant, key)``, pinned (``decay()`` leaves it active), its value,
key, write order and TTL kept in ``meta["store"]`` (:mod:`hindsight_lg._items`).
A put to the key of a memory the engine captured corrects that memory
instead (new content, re-embedded, version bumped): one memory, not two. A
put of ``None`` deletes.

The text embedded for search is the value's index fields (the put's own, else
the store's), else its ``content`` / ``text`` / ``memory`` / ``data``, else
the whole value as JSON; an item put with ``index=False`` keeps that text as
content but is not ranked by a query.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from langgraph.store.base import PutOp
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from hindsight_lg._items import META, WriteSequence, item_id, item_meta, write_order
from hindsight_lg._store_ttl import expiry
from hindsight_lg.backends import Where
from hindsight_lg.memory import PINNED_KEY, HindsightMemory
from hindsight_lg.model import Kind, MemoryRecord, SourceKind, Status, Tier
from hindsight_lg.tenancy import TenantMap

_TEXT_KEYS = ("content", "text", "memory", "data")
ACTIVE = Where(statuses=(Status.ACTIVE.value,))


class ItemWriter:
    """Writes a store's puts into the engine.

    Args:
        memory: the engine.
        tenants: how namespace tuples map to tenants.
        kind: the kind of an item whose value names no valid ``kind``.
        fields: the store's index fields (``None``: the text keys).
    """

    def __init__(
        self,
        memory: HindsightMemory,
        tenants: TenantMap,
        kind: Kind,
        fields: list[str] | None,
    ) -> None:
        self.memory, self.tenants = memory, tenants
        self.kind, self.fields = kind, fields
        self._seq = WriteSequence()
        self._namespace_seq: dict[tuple[str, ...], int] = {}

    def put(self, op: PutOp, old: MemoryRecord | None) -> None:
        """Write ``op``; ``old`` is the live record its key names, if any."""
        if op.value is None:
            if old is not None:
                self.memory.forget(old.namespace, [old.id])
            return
        if old is not None and item_meta(old) is None:
            # A put to a captured memory's key corrects that memory.
            content = self.text(dict(op.value), op.index) or self.text(op.value, None)
            if content != old.content:
                self.memory.update(old.namespace, old.id, content=content)
            return
        self._write(op, old)

    def text(self, value: Mapping[str, Any], index: Any) -> str:
        """The text to embed, ``""`` when the item is not indexed."""
        if index is False:
            return ""
        fields = list(index) if index else self.fields
        if fields:
            texts = [
                t for f in fields for t in get_text_at_path(value, tokenize_path(f))
            ]
            return " ".join(t for t in texts if t)
        for key in _TEXT_KEYS:
            if isinstance(value.get(key), str) and value[key].strip():
                return str(value[key])
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)

    def _sequence(
        self, namespace: tuple[str, ...], old: MemoryRecord | None
    ) -> dict[str, int]:
        if old is not None:
            return dict(zip(("ns_seq", "seq"), write_order(old), strict=True))
        seq = self._seq.next()
        ns_seq = self._namespace_seq.get(namespace)
        if ns_seq is None:
            siblings = self.memory.query(
                self.tenants.tenant(namespace), ACTIVE, limit=1
            )
            ns_seq = write_order(siblings[0])[0] if siblings else seq
            self._namespace_seq[namespace] = ns_seq
        return {"ns_seq": ns_seq, "seq": seq}

    def _write(self, op: PutOp, old: MemoryRecord | None) -> None:
        tenant = self.tenants.tenant(op.namespace)
        value = dict(op.value or {})
        text = self.text(value, op.index)
        content = text or self.text(value, None)
        kind = Kind(value["kind"]) if value.get("kind") in set(Kind) else self.kind
        now = self.memory.clock()
        stored = {
            "namespace": list(op.namespace),
            "key": op.key,
            "value": value,
            "index": bool(text),
            **self._sequence(op.namespace, old),
            **expiry(op.ttl, now),
        }
        record = MemoryRecord(
            namespace=tenant,
            content=content,
            kind=kind,
            id=item_id(tenant, op.key),
            tier=Tier.SEMANTIC,
            summary=content[:120],
            event_time=now,
            created_at=old.created_at if old else now,
            importance=self.memory.policy.importance(kind),
            half_life_days=self.memory.policy.half_life(kind),
            source_kind=SourceKind.THIRD_PARTY,
            version=old.version + 1 if old else 1,
            meta={META: stored, "store_updated": now, PINNED_KEY: True},
        )
        self.memory.put_record(record, op="store_put", detail={"key": op.key})
