"""HindsightStore on Milvus Lite answers like LangGraph's InMemoryStore, op for op.

Random sequences of puts (indexed, ``index=False``, field-indexed), deletes,
gets, searches with and without a query, filters, limit / offset,
list_namespaces with prefix / suffix / max_depth, batches and async forms run
on both stores; every answer is compared. Query searches are compared as sets
(their order and scores come from different embeddings). The reference lists
only namespaces that hold items, as database-backed stores do: InMemoryStore
keeps listing a namespace forever once any operation, even a ``get``, named it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from hindsight_lg import HindsightMemory
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import HashingEmbedder

SPACES = [
    ("memories", "u1"),
    ("memories", "u2"),
    ("docs",),
    ("docs", "a"),
    ("u1", "notes"),
]
PREFIXES: list[tuple[str, ...]] = [(), ("memories",), ("docs",), *SPACES]
WORDS = ["tea", "coffee", "paris", "berlin", "cat", "dog", "rain", "sun"]


class _Embeddings(Embeddings):
    """LangChain embeddings over the hashing embedder, for the reference store."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder()

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [list(v) for v in self.inner.embed(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class _Reference(InMemoryStore):
    """InMemoryStore listing only namespaces that hold items."""

    def _handle_list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        every = self._data
        self._data = {ns: items for ns, items in every.items() if items}  # type: ignore[assignment]
        try:
            return super()._handle_list_namespaces(op)
        finally:
            self._data = every


@pytest.fixture(scope="module")
def engine(milvus_pool: Any) -> Iterator[HindsightMemory]:
    embedder = HashingEmbedder()
    backend = milvus_pool.get("storediff", dim=embedder.dim, model_id=embedder.model_id)
    memory = HindsightMemory(backend, embedder)
    yield memory
    memory.close()


def _value(rng: random.Random) -> dict[str, Any]:
    value: dict[str, Any] = {"n": rng.randrange(10), "tag": rng.choice("xyz")}
    if rng.random() < 0.8:
        value["text"] = " ".join(rng.sample(WORDS, 3))
    return value


def _filter(rng: random.Random) -> dict[str, Any] | None:
    return rng.choice(
        [None, {"tag": rng.choice("xyz")}, {"n": {"$gte": rng.randrange(10)}}]
    )


def _random_op(rng: random.Random) -> Op:
    space, key = rng.choice(SPACES), f"k{rng.randrange(4)}"
    roll = rng.random()
    if roll < 0.4:
        index = rng.choice([None, False, ["text"], ["tag"]])
        return PutOp(space, key, _value(rng), index=index)
    if roll < 0.5:
        return PutOp(space, key, None)
    if roll < 0.6:
        return GetOp(space, key)
    if roll < 0.85:
        query = rng.choice([None, None, " ".join(rng.sample(WORDS, 2))])
        limit, offset = (100, 0) if query else (rng.randrange(1, 6), rng.randrange(4))
        return SearchOp(rng.choice(PREFIXES), _filter(rng), limit, offset, query)
    conditions = []
    if rng.random() < 0.5:
        kind = rng.choice(["prefix", "suffix"])
        path = rng.choice([("memories",), ("docs",), ("notes",), ("*", "a")])
        conditions.append(MatchCondition(kind, path))  # type: ignore[arg-type]
    depth = rng.choice([None, 1, 2])
    return ListNamespacesOp(
        tuple(conditions), depth, rng.randrange(1, 8), rng.randrange(3)
    )


def _batch(rng: random.Random, size: int) -> list[Op]:
    """``size`` random ops with at most one put: InMemoryStore fails to embed two
    puts of the same text in one batch (it counts the text once)."""
    ops: list[Op] = []
    while len(ops) < size:
        op = _random_op(rng)
        if not (isinstance(op, PutOp) and any(isinstance(o, PutOp) for o in ops)):
            ops.append(op)
    return ops


def _norm(op: Op, result: Any) -> Any:
    """A store answer in comparable form (query searches as sets)."""
    if isinstance(op, GetOp):
        return None if result is None else (result.namespace, result.key, result.value)
    if isinstance(op, SearchOp):
        items = [(tuple(i.namespace), i.key, repr(i.value)) for i in result]
        return sorted(items) if op.query else items
    return result


def _pair(engine: HindsightMemory) -> tuple[BaseStore, HindsightStore]:
    reference = _Reference(
        index={"dims": 384, "embed": _Embeddings(), "fields": ["text"]}
    )
    ours = HindsightStore(engine, index={"fields": ["text"]})
    # Both stores learn the namespaces in one order (it orders unqueried search).
    for store in (reference, ours):
        for space in SPACES:
            store.put(space, "seed", {"n": 0})
            store.delete(space, "seed")
    return reference, ours


def _clear(engine: HindsightMemory) -> None:
    for tenant in engine.namespaces():
        engine.forget(tenant)


def _check(
    reference: BaseStore, ours: HindsightStore, ops: Sequence[Op], step: str
) -> None:
    expected = [_norm(op, r) for op, r in zip(ops, reference.batch(ops), strict=True)]
    actual = [_norm(op, r) for op, r in zip(ops, ours.batch(ops), strict=True)]
    assert actual == expected, f"{step}: {ops}"


@pytest.mark.parametrize("seed", range(6))
def test_random_sequences_answer_like_in_memory_store(
    engine: HindsightMemory, seed: int
) -> None:
    """Every get, search and list_namespaces answer matches InMemoryStore's."""
    rng = random.Random(seed)
    reference, ours = _pair(engine)
    try:
        for step in range(45):
            size = 1 if rng.random() < 0.8 else rng.randrange(2, 4)
            ops = _batch(rng, size)
            _check(reference, ours, ops, f"seed {seed} step {step}")
        final = [SearchOp((), None, 100, 0, None), ListNamespacesOp((), None, 100, 0)]
        _check(reference, ours, final, f"seed {seed} final")
    finally:
        _clear(engine)


async def test_async_forms_answer_like_in_memory_store(engine: HindsightMemory) -> None:
    """aput / aget / asearch / alist_namespaces / abatch match InMemoryStore's."""
    reference, ours = _pair(engine)
    try:
        for store in (reference, ours):
            await store.aput(
                ("docs",), "a", {"text": "tea in paris", "n": 1, "tag": "x"}
            )
            await store.aput(("docs", "a"), "b", {"text": "rain", "n": 2}, index=False)
            await store.aput(("memories", "u1"), "c", {"text": "cat", "n": 3})
            await store.adelete(("memories", "u1"), "c")
        for call in (
            lambda s: s.aget(("docs",), "a"),
            lambda s: s.asearch(("docs",), limit=1, offset=1),
            lambda s: s.asearch(("docs",), filter={"n": {"$gt": 1}}),
            lambda s: s.alist_namespaces(prefix=("docs",)),
            lambda s: s.alist_namespaces(max_depth=1),
        ):
            want, got = await call(reference), await call(ours)
            assert _plain(got) == _plain(want)
        ops = [GetOp(("docs",), "a"), SearchOp(("docs",), None, 10, 0, "tea")]
        want = await reference.abatch(ops)
        got = await ours.abatch(ops)
        assert [_norm(o, r) for o, r in zip(ops, got, strict=True)] == [
            _norm(o, r) for o, r in zip(ops, want, strict=True)
        ]
    finally:
        _clear(engine)


def _plain(result: Any) -> Any:
    if isinstance(result, list):
        return [_plain(r) for r in result]
    if hasattr(result, "key"):
        return (tuple(result.namespace), result.key, result.value)
    return result
