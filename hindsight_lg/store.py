"""``HindsightStore``: a LangGraph ``BaseStore`` over the same long-term memory.

``compile(store=...)``, ``runtime.store``, ``create_agent(store=...)``, the
LangGraph server and tools written for LangGraph stores work on it unchanged.

*Where items live.* A namespace tuple maps to a memory tenant through a
:class:`~hindsight_lg.tenancy.TenantMap`: LangGraph's usual layout
``("memories", user_id)`` is the very tenant the nodes, the middleware and the
memory tools use for that user, so items an app (or LangMem's tools) puts
there are recalled by ``add_hindsight``; every other tuple gets a tenant of
its own, losslessly encoded, and a prefix search never reaches another
tenant. The user's captured memories show up under ``("memories", user_id)``,
keyed by memory id.

*Semantics* follow LangGraph's ``InMemoryStore``: a search without a query
lists items namespace by namespace in the order namespaces were first
written, then by the order keys were first written (``offset`` pages the same
way); a query search ranks indexed items by cosine similarity to the query
(scores are comparable across namespaces) and appends items put with
``index=False`` (or whose index fields hold no text) with score ``None``.
For the full recall ranking (recency, importance, graph) call
``memory.recall`` instead. Namespaces are listed while they hold items.

*Agent privacy.* An agent's private memory is seen by that agent only, on
the store as in recall: a call made for another agent (the store's own
``agent_id``, else the agent the running graph or tool names, see
:mod:`hindsight_lg._store_agent`) neither gets, searches nor lists it, and a
``put`` or ``delete`` by key never changes it: a delete finds nothing, and a
put to a key that is such a memory's id is refused (``ValueError``) rather
than adding an item beside it that its own agent would then read at that key.
Without an agent (outside a run, or a run that names none) the whole
namespace is visible, as in ``memory.recall`` without ``agent_id``.

*Store items and the memory lifecycle.* Items put through the store are
pinned: ``decay()`` leaves them active, so they never drop out of ``search``
while ``get`` still finds them. Expire them with LangGraph's TTL instead
(``put(..., ttl=minutes)``, ``refresh_ttl`` on reads, a store-wide default
with ``ttl={"default_ttl": ..., "refresh_on_read": ...}``); expired items are
invisible at once and deleted for real by :meth:`HindsightStore.sweep_ttl`.

*Two sides of a user's namespace.* ``("memories", user_id)`` holds what apps
put there and what the engine captured; every item says which in
:attr:`HindsightItem.origin` (``"app"`` or ``"captured"``), and a search picks
one side with ``filter={"$origin": "app"}`` or ``{"$origin": "captured"}``
(see :data:`ORIGIN`), combinable with value filters. Without it a search
returns both, as LangMem and the server templates expect.

This module reads; how a put becomes a record is :mod:`hindsight_lg._store_write`,
and the TTL's expiry, refresh and sweep are :mod:`hindsight_lg._store_ttl`.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np
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
    TTLConfig,
)

from hindsight_lg._items import (
    ORIGIN,
    Origin,
    item_id,
    item_meta,
    matches,
    origin_of,
    split_origin,
    value_of,
    when,
    write_order,
)
from hindsight_lg._store_agent import calling_agent
from hindsight_lg._store_ttl import ALL, expires_at, refresh, sweep
from hindsight_lg._store_write import ACTIVE, ItemWriter
from hindsight_lg.backends import Where, visible_to
from hindsight_lg.embeddings import embed_queries
from hindsight_lg.memory import HindsightMemory
from hindsight_lg.model import Kind, MemoryRecord, Status
from hindsight_lg.tenancy import DEFAULT_TENANTS, TenantMap, labels_of, tenant_of

__all__ = [
    "HindsightItem",
    "HindsightStore",
    "ORIGIN",
    "Origin",
    "labels_of",
    "matches",
    "tenant_of",
]


def _active(reader: str | None) -> Where:
    """Active records the reader may see (``None``: every agent's)."""
    return ACTIVE if reader is None else Where(statuses=ACTIVE.statuses, reader=reader)


class HindsightItem(SearchItem):
    """A store item that says where it came from.

    ``get`` and ``search`` return these; equality, ``dict()`` and what
    LangGraph's server sends are those of a plain :class:`SearchItem`.

    Attributes:
        origin: ``"app"`` for an item put through the store (by an app, a
            tool or LangMem), ``"captured"`` for a memory the engine holds
            (captured from a conversation, written by the memory tools,
            learned by reflection).

    Example:
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> store = HindsightStore(HindsightMemory(InMemoryBackend(), HashingEmbedder()))
        >>> store.put(("memories", "u42"), "tea", {"content": "Likes green tea"})
        >>> [i.origin for i in store.search(("memories", "u42"))]
        ['app']
    """

    __slots__ = ("origin",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
        *,
        origin: Origin,
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        self.origin: Origin = origin


class HindsightStore(BaseStore):
    """A LangGraph store backed by hindsight-lg memory (Milvus or in-memory).

    Args:
        memory: the engine whose backend and embedder the store uses.
        kind: kind of memory for items whose value has no valid ``kind``.
        tenants: how namespace tuples map to memory tenants (default:
            ``("memories", user_id)`` is the user's tenant).
        index: like LangGraph's index config; only ``fields`` is read (the
            engine's embedder does the embedding). Without fields, an item's
            text is its ``content`` / ``text`` / ``memory`` / ``data`` value,
            else the whole value as JSON.
        ttl: LangGraph's ``TTLConfig`` (``default_ttl`` minutes,
            ``refresh_on_read``).
        agent_id: the agent this store reads and writes for, whatever a run
            names; ``None`` takes the run's agent (its context's
            ``agent_id``, then ``configurable["agent_id"]``). Another agent's
            private memories are invisible and unchangeable to it.

    Example:
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> store = HindsightStore(HindsightMemory(InMemoryBackend(), HashingEmbedder()))
        >>> store.put(("memories", "u42"), "tea", {"content": "Likes green tea"})
        >>> store.get(("memories", "u42"), "tea").value["content"]
        'Likes green tea'
    """

    supports_ttl = True

    def __init__(
        self,
        memory: HindsightMemory,
        *,
        kind: Kind | str = Kind.FACT,
        tenants: TenantMap = DEFAULT_TENANTS,
        index: Mapping[str, Any] | None = None,
        ttl: TTLConfig | None = None,
        agent_id: str | None = None,
    ) -> None:
        self.memory = memory
        self.agent_id = agent_id or None
        self.kind = Kind(kind)
        self.tenants = tenants
        fields = (index or {}).get("fields")
        self.fields: list[str] | None = list(fields) if fields else None
        self.ttl_config = ttl
        self._writer = ItemWriter(memory, tenants, self.kind, self.fields)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run get / search / list-namespaces operations, then the puts.

        As in LangGraph's own stores, the reads of a batch see the store as
        it was before the batch, and of several puts to one key the last wins.
        The whole batch is made for one agent (see *Agent privacy* above).

        Raises:
            ValueError: a put names another agent's private memory by its id.
        """
        ops = list(ops)
        reader = calling_agent(self.agent_id)
        results = [
            None if isinstance(op, PutOp) else self._one(op, reader) for op in ops
        ]
        puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}
        if reader is not None:  # every put is checked before the first write
            for put in puts.values():
                self._refuse_hidden(put, reader)
        for put in puts.values():
            self._writer.put(put, self._find(put.namespace, put.key, reader))
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of :meth:`batch` (the work runs in a worker thread)."""
        # to_thread copies the context, so the worker still sees the run.
        return await asyncio.to_thread(self.batch, list(ops))

    def _one(self, op: Op, reader: str | None) -> Result:
        if isinstance(op, GetOp):
            return self._get(op, reader)
        if isinstance(op, SearchOp):
            return self._search(op, reader)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op, reader)
        raise TypeError(f"unknown store operation {type(op).__name__}")

    # -- visibility -------------------------------------------------------------

    def _visible(self, record: MemoryRecord, now: float, reader: str | None) -> bool:
        if record.status is not Status.ACTIVE:
            return False
        if reader is not None and not visible_to(record, reader):
            return False
        expires = expires_at(item_meta(record) or {})
        return expires is None or expires > now

    def _labels(self, record: MemoryRecord) -> tuple[str, ...] | None:
        # Always the tenant's own labels, never those kept in the record: an
        # imported or edited record cannot pose as another namespace's item.
        return self.tenants.labels(record.namespace)

    def _item(self, record: MemoryRecord, score: float | None = None) -> HindsightItem:
        stored = item_meta(record) or {}
        updated = max(record.created_at, float(record.meta.get("store_updated", 0.0)))
        return HindsightItem(
            namespace=self._labels(record) or (record.namespace,),
            key=str(stored.get("key", record.id)),
            value=value_of(record),
            created_at=when(record.created_at),
            updated_at=when(updated),
            score=score,
            origin=origin_of(record),
        )

    # -- reads ------------------------------------------------------------------

    def _find(
        self,
        namespace: tuple[str, ...],
        key: str,
        reader: str | None,
        *,
        vectors: bool = False,
    ) -> MemoryRecord | None:
        """The live record of an item (put by the store, or a memory by its id)."""
        tenant = self.tenants.tenant(namespace)
        now = self.memory.clock()
        ids = [item_id(tenant, key), *_memory_ids(key)]
        # One read for every id the key may name: on a server each is a trip.
        found = {r.id: r for r in self.memory.get_many(tenant, ids, vectors=vectors)}
        for wanted in ids:
            record = found.get(wanted)
            if record is None or not self._visible(record, now, reader):
                continue
            if self._labels(record) == namespace:
                if wanted != ids[0] and item_meta(record) is not None:
                    continue  # a store item is addressed by its key, not its id
                return record
        return None

    def _refuse_hidden(self, op: PutOp, reader: str) -> None:
        """Refuse a put whose key is the id of another agent's private memory.

        Adding an item there would not change that memory, but its own agent
        would then read the item at that key instead of it.
        """
        if op.value is None or self._find(op.namespace, op.key, reader) is not None:
            return
        tenant, now = self.tenants.tenant(op.namespace), self.memory.clock()
        rows = self.memory.get_many(tenant, _memory_ids(op.key))
        if any(self._visible(r, now, None) and not visible_to(r, reader) for r in rows):
            raise ValueError(
                f"key {op.key!r} of {op.namespace!r} is the id of a memory this "
                f"agent ({reader!r}) may not change; put the item under another key"
            )

    def _get(self, op: GetOp, reader: str | None) -> Item | None:
        record = self._find(op.namespace, op.key, reader, vectors=op.refresh_ttl)
        if record is None:
            return None
        if op.refresh_ttl:
            refresh(self.memory, [record])
        return self._item(record)

    def _tenants(self, prefix: tuple[str, ...]) -> list[str]:
        found = []
        for tenant in self.memory.namespaces():
            labels = self.tenants.labels(tenant)
            if labels is not None and labels[: len(prefix)] == prefix:
                found.append(tenant)
        return found

    def _records(
        self, prefix: tuple[str, ...], vectors: bool, reader: str | None
    ) -> list[MemoryRecord]:
        now, out, where = self.memory.clock(), [], _active(reader)
        for tenant in self._tenants(prefix):
            rows = self.memory.query(tenant, where, limit=ALL, vectors=vectors)
            out += [r for r in rows if self._visible(r, now, reader)]
        return out

    def _search(self, op: SearchOp, reader: str | None) -> list[SearchItem]:
        origin, where = split_origin(op.filter)
        records = [
            r
            for r in self._records(op.namespace_prefix, bool(op.query), reader)
            if origin in (None, origin_of(r)) and matches(value_of(r), where)
        ]
        if op.query:
            found = self._ranked(op, records)
        else:
            records.sort(key=write_order)
            found = [(r, None) for r in records[op.offset : op.offset + op.limit]]
        if op.refresh_ttl:
            refresh(self.memory, [r for r, _ in found])
        return [self._item(r, score) for r, score in found]

    def _ranked(
        self, op: SearchOp, records: list[MemoryRecord]
    ) -> list[tuple[MemoryRecord, float | None]]:
        """Indexed items by cosine similarity (questions asked before after the
        statements), then unindexed ones without a score."""
        indexed = [r for r in records if (item_meta(r) or {}).get("index", True)]
        ids = {r.id for r in indexed}
        scoreless = sorted((r for r in records if r.id not in ids), key=write_order)
        scored: list[tuple[MemoryRecord, float | None]] = []
        if indexed:
            query = np.asarray(embed_queries(self.memory.embedder, [op.query or ""])[0])
            matrix = np.asarray([r.dense for r in indexed], dtype=np.float64)
            norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
            sims = matrix @ query / np.where(norms == 0, 1.0, norms)
            # A question asked before is no answer: it follows every statement.
            order = sorted(
                range(len(indexed)),
                key=lambda i: (
                    indexed[i].kind is Kind.QUERY,
                    -sims[i],
                    write_order(indexed[i]),
                ),
            )
            scored = [(indexed[i], float(sims[i])) for i in order]
        kept = scored[op.offset : op.offset + op.limit]
        room = op.limit - len(kept)
        return kept + [(r, None) for r in scoreless[: max(room, 0)]]

    def _list_namespaces(
        self, op: ListNamespacesOp, reader: str | None
    ) -> list[tuple[str, ...]]:
        spaces = {
            labels
            for tenant in self.memory.namespaces()
            if (labels := self.tenants.labels(tenant)) is not None
            and self._holds_items(tenant, reader)
        }
        for cond in op.match_conditions or ():
            spaces = {s for s in spaces if _path_matches(s, cond.match_type, cond.path)}
        if op.max_depth is not None:
            spaces = {s[: op.max_depth] for s in spaces}
        return sorted(spaces)[op.offset : op.offset + op.limit]

    def _holds_items(self, tenant: str, reader: str | None) -> bool:
        now, where = self.memory.clock(), _active(reader)
        if self.memory.count(tenant, where) == 0:
            return False
        rows = self.memory.query(tenant, where)
        return any(self._visible(r, now, reader) for r in rows)

    def sweep_ttl(self) -> int:
        """Delete expired items for real; returns how many were deleted."""
        return sweep(self.memory)


def _memory_ids(key: str) -> list[str]:
    """The memory ids ``key`` may name: itself and, for any UUID spelling, its hex.

    Memory ids are 32 hex digits; tools that parse ids as UUIDs (LangMem's)
    hand them back dashed (``str(uuid.UUID(id))``).
    """
    try:
        hexed = uuid.UUID(key).hex
    except (ValueError, AttributeError, TypeError):
        return [key]
    return [key] if hexed == key else [key, hexed]


def _path_matches(space: tuple[str, ...], match_type: str, path: Sequence[str]) -> bool:
    part = space[: len(path)] if match_type == "prefix" else space[-len(path) :]
    if len(part) != len(path):
        return False
    return all(p == "*" or p == s for p, s in zip(path, part, strict=True))
