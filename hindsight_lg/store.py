"""``HindsightStore``: a LangGraph ``BaseStore`` over the same long-term memory.

``compile(store=...)``, ``runtime.store``, ``create_agent(store=...)`` and tools
written for LangGraph stores work on it unchanged. A store namespace
``("u42", "notes")`` is the memory namespace ``"u42.notes"``: LangGraph labels
cannot contain dots, and the few characters a memory namespace refuses
(control and format characters, an all-blank label) are percent-escaped, with
``%`` itself as ``%25``, so every valid label tuple round-trips exactly. A
user id with dots (``maya@x.com``) shows up as nested labels
``("maya@x", "com")``, which map back to the same user; an item is one memory whose id
derives from namespace and key, so ``put`` on the same key replaces it.
Memories captured by the nodes show up too: namespace ``("u42",)`` lists the
memories of user ``u42``, keyed by memory id.
"""

from __future__ import annotations

import asyncio
import json
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from hindsight_lg.memory.engine import HindsightMemory
from hindsight_lg.model import Kind, MemoryRecord, SourceKind, Tier

__all__ = ["HindsightStore", "labels_of", "tenant_of"]

_SEP = "."
_TEXT_KEYS = ("content", "text", "memory", "data")
_META = "store"


_ESCAPED = re.compile(r"%([0-9A-F]{2})")
_HIDDEN = frozenset({"Cc", "Cf", "Cs"})


def _escape_char(ch: str) -> str:
    return "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))


def _escape(label: str) -> str:
    """``label`` with ``%`` and what memory namespaces refuse percent-escaped.

    Plain labels (``u42``, ``notes``, ``John Smith``) are left as they are, so a
    user's store namespace and the namespace captures write are the same.
    """
    out = "".join(
        _escape_char(ch) if ch == "%" or unicodedata.category(ch) in _HIDDEN else ch
        for ch in label
    )
    if not out.strip():  # an all-blank label would make the namespace blank
        out = "".join(_escape_char(ch) for ch in out)
    return out


def _byte_char(byte: int) -> str:
    # ASCII stands for itself; higher bytes use surrogateescape's stand-ins.
    return chr(byte) if byte < 0x80 else chr(0xDC00 + byte)


def _unescape(part: str) -> str:
    if "%" not in part:
        return part
    raw = _ESCAPED.sub(lambda m: _byte_char(int(m.group(1), 16)), part)
    # Escapes are UTF-8 bytes; rebuilt through surrogateescape they decode
    # back to the original characters.
    try:
        return raw.encode("utf-8", "surrogateescape").decode("utf-8", "surrogatepass")
    except UnicodeError:  # a "%" sequence the store did not write: keep it
        return part


def tenant_of(namespace: Sequence[str]) -> str:
    """The memory namespace of a store namespace tuple."""
    return _SEP.join(_escape(label) for label in namespace)


def labels_of(tenant: str) -> tuple[str, ...]:
    """The store namespace tuple of a memory namespace (inverse of :func:`tenant_of`)."""
    return tuple(_unescape(part) for part in tenant.split(_SEP))


def item_id(tenant: str, key: str) -> str:
    """The stable memory id of a store item."""
    return uuid.uuid5(uuid.NAMESPACE_URL, f"hindsight-store\0{tenant}\0{key}").hex


def _text(value: Mapping[str, Any], index: list[str] | None) -> str:
    if index:
        parts = [value.get(f) for f in index]
        return " ".join(str(p) for p in parts if p not in (None, ""))
    for key in _TEXT_KEYS:
        if isinstance(value.get(key), str) and value[key].strip():
            return str(value[key])
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


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


def _value_of(record: MemoryRecord) -> dict[str, Any]:
    stored = record.meta.get(_META)
    if stored is not None:
        return dict(stored["value"])
    return {
        "content": record.content,
        "kind": record.kind.value,
        "importance": record.importance,
        "confidence": record.confidence,
        "agent_id": record.agent_id,
        "thread_id": record.thread_id,
        "status": record.status.value,
    }


def _key_of(record: MemoryRecord) -> str:
    stored = record.meta.get(_META)
    return str(stored["key"]) if stored is not None else record.id


def _namespace_of(record: MemoryRecord) -> tuple[str, ...]:
    stored = record.meta.get(_META)
    if stored is not None:
        return tuple(stored["namespace"])
    return labels_of(record.namespace)


def _when(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, UTC)


def to_item(record: MemoryRecord, score: float | None = None) -> SearchItem:
    """A memory as a LangGraph search item (``Item`` plus a score)."""
    updated = max(record.created_at, float(record.meta.get("store_updated", 0.0)))
    return SearchItem(
        namespace=_namespace_of(record),
        key=_key_of(record),
        value=_value_of(record),
        created_at=_when(record.created_at),
        updated_at=_when(updated),
        score=score,
    )


class HindsightStore(BaseStore):
    """A LangGraph store backed by hindsight-lg memory (Milvus or in-memory).

    Args:
        memory: the engine whose backend and embedder the store uses.
        kind: kind of memory for items whose value has no valid ``kind``.

    Example:
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> store = HindsightStore(HindsightMemory(InMemoryBackend(), HashingEmbedder()))
        >>> store.put(("u42", "notes"), "tea", {"content": "Likes green tea"})
        >>> store.get(("u42", "notes"), "tea").value["content"]
        'Likes green tea'
    """

    def __init__(
        self, memory: HindsightMemory, *, kind: Kind | str = Kind.FACT
    ) -> None:
        self.memory = memory
        self.kind = Kind(kind)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run get / search / put / list-namespaces operations in order."""
        return [self._one(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch` (the work runs in a worker thread)."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    # -- reads -----------------------------------------------------------------

    def _find(self, namespace: tuple[str, ...], key: str) -> MemoryRecord | None:
        tenant = tenant_of(namespace)
        backend = self.memory.backend
        rows = backend.get(tenant, [item_id(tenant, key)]) or backend.get(tenant, [key])
        live = [r for r in rows if r.status.value != "deleted"]
        return live[0] if live and _namespace_of(live[0]) == namespace else None

    def _get(self, op: GetOp) -> Item | None:
        record = self._find(op.namespace, op.key)
        return None if record is None else to_item(record)

    def _tenants(self, prefix: tuple[str, ...]) -> list[str]:
        return [
            t for t in self.memory.namespaces() if labels_of(t)[: len(prefix)] == prefix
        ]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        want = op.offset + op.limit
        found: list[SearchItem] = []
        for tenant in self._tenants(op.namespace_prefix):
            found += self._search_tenant(tenant, op, want)
        if op.query:
            found.sort(key=lambda i: i.score or 0.0, reverse=True)
        else:
            found.sort(key=lambda i: i.updated_at, reverse=True)
        return found[op.offset : want]

    def _search_tenant(self, tenant: str, op: SearchOp, want: int) -> list[SearchItem]:
        if not op.query:
            records = self.memory.list_memories(tenant, limit=100_000)
            items = [to_item(r) for r in records]
        else:
            hits = self.memory.recall(
                op.query,
                namespace=tenant,
                k=max(want * 4, 20),
                budget_tokens=1_000_000,
                timeout=None,
            )
            items = [
                to_item(m.record, m.score)
                for m in hits.memories
                if m.record.meta.get(_META, {}).get("index", True)
            ]
        prefix = op.namespace_prefix
        return [
            i
            for i in items
            if i.namespace[: len(prefix)] == prefix and matches(i.value, op.filter)
        ]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        spaces = {labels_of(t) for t in self.memory.namespaces()}
        for cond in op.match_conditions or ():
            spaces = {s for s in spaces if _path_matches(s, cond.match_type, cond.path)}
        if op.max_depth is not None:
            spaces = {s[: op.max_depth] for s in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]

    # -- writes ----------------------------------------------------------------

    def _put(self, op: PutOp) -> None:
        tenant = tenant_of(op.namespace)
        old = self._find(op.namespace, op.key)
        if op.value is None:
            if old is not None:
                self.memory.forget(tenant, [old.id])
            return
        self._write(op, tenant, old)

    def _write(self, op: PutOp, tenant: str, old: MemoryRecord | None) -> None:
        value = dict(op.value or {})
        index = None if op.index in (None, False) else list(op.index or [])
        text = _text(value, index)
        kind: Kind = (
            Kind(value["kind"]) if value.get("kind") in set(Kind) else self.kind
        )
        now = self.memory.clock()
        record = MemoryRecord(
            namespace=tenant,
            content=text,
            kind=kind,
            id=item_id(tenant, op.key),
            tier=Tier.SEMANTIC,
            summary=text[:120],
            event_time=now,
            created_at=old.created_at if old else now,
            importance=self.memory.policy.importance(kind),
            half_life_days=self.memory.policy.half_life(kind),
            source_kind=SourceKind.THIRD_PARTY,
            version=old.version + 1 if old else 1,
            meta={
                _META: {
                    "namespace": list(op.namespace),
                    "key": op.key,
                    "value": value,
                    "index": op.index is not False,
                },
                "store_updated": now,
            },
        )
        self.memory.put_record(record, op="store_put", detail={"key": op.key})


def _path_matches(space: tuple[str, ...], match_type: str, path: Sequence[str]) -> bool:
    part = space[: len(path)] if match_type == "prefix" else space[-len(path) :]
    if len(part) != len(path):
        return False
    return all(p == "*" or p == s for p, s in zip(path, part, strict=True))
