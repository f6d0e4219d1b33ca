"""A ``BaseStore`` conformance suite: answer like LangGraph's ``InMemoryStore``, op for op.

``HindsightStore`` passes it on Milvus Lite; a store built on it (another
tenant mapping, another backend) runs the same assertions by subclassing
:class:`StoreConformance` and giving a ``store`` fixture that yields an empty
store built with ``index={"fields": ["text"]}`` and clears it afterwards::

    import pytest
    from hindsight_lg.testing.store_conformance import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store(self):
            memory = HindsightMemory.from_uri(":memory:", embedder=HashingEmbedder())
            yield HindsightStore(memory, index={"fields": ["text"]})
            memory.close()

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
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Literal

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

from hindsight_lg.embeddings.hashing import HashingEmbedder

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
    """InMemoryStore listing only namespaces that hold items.

    Overrides InMemoryStore's list handler (a private method): it keeps listing
    a namespace once any operation named it, which no database-backed store does.
    """

    def _handle_list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        every = self._data
        self._data = {ns: items for ns, items in every.items() if items}
        try:
            return super()._handle_list_namespaces(op)
        finally:
            self._data = every


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
        choices: list[Literal[False] | list[str] | None] = [
            None,
            False,
            ["text"],
            ["tag"],
        ]
        return PutOp(space, key, _value(rng), index=rng.choice(choices))
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


def _pair(ours: BaseStore) -> tuple[BaseStore, BaseStore]:
    reference = _Reference(
        index={"dims": 384, "embed": _Embeddings(), "fields": ["text"]}
    )
    # Both stores learn the namespaces in one order (it orders unqueried search).
    for store in (reference, ours):
        for space in SPACES:
            store.put(space, "seed", {"n": 0})
            store.delete(space, "seed")
    return reference, ours


def _check(reference: BaseStore, ours: BaseStore, ops: Sequence[Op], step: str) -> None:
    expected = [_norm(op, r) for op, r in zip(ops, reference.batch(ops), strict=True)]
    actual = [_norm(op, r) for op, r in zip(ops, ours.batch(ops), strict=True)]
    assert actual == expected, f"{step}: {ops}"


class StoreConformance:
    """The suite's tests; subclasses provide a ``store`` fixture (see the module)."""

    @pytest.mark.parametrize("seed", range(6))
    def test_random_sequences_answer_like_in_memory_store(
        self, store: BaseStore, seed: int
    ) -> None:
        """Every get, search and list_namespaces answer matches InMemoryStore's."""
        rng = random.Random(seed)
        reference, ours = _pair(store)
        for step in range(45):
            size = 1 if rng.random() < 0.8 else rng.randrange(2, 4)
            ops = _batch(rng, size)
            _check(reference, ours, ops, f"seed {seed} step {step}")
        final: list[Op] = [
            SearchOp((), None, 100, 0, None),
            ListNamespacesOp((), None, 100, 0),
        ]
        _check(reference, ours, final, f"seed {seed} final")

    async def test_async_forms_answer_like_in_memory_store(
        self, store: BaseStore
    ) -> None:
        """aput / aget / asearch / alist_namespaces / abatch match InMemoryStore's."""
        reference, ours = _pair(store)
        for each in (reference, ours):
            await each.aput(
                ("docs",), "a", {"text": "tea in paris", "n": 1, "tag": "x"}
            )
            await each.aput(("docs", "a"), "b", {"text": "rain", "n": 2}, index=False)
            await each.aput(("memories", "u1"), "c", {"text": "cat", "n": 3})
            await each.adelete(("memories", "u1"), "c")
        calls: list[Callable[[BaseStore], Awaitable[Any]]] = [
            lambda s: s.aget(("docs",), "a"),
            lambda s: s.asearch(("docs",), limit=1, offset=1),
            lambda s: s.asearch(("docs",), filter={"n": {"$gt": 1}}),
            lambda s: s.alist_namespaces(prefix=("docs",)),
            lambda s: s.alist_namespaces(max_depth=1),
        ]
        for call in calls:
            want, got = await call(reference), await call(ours)
            assert _plain(got) == _plain(want)
        ops: list[Op] = [GetOp(("docs",), "a"), SearchOp(("docs",), None, 10, 0, "tea")]
        want = await reference.abatch(ops)
        got = await ours.abatch(ops)
        assert [_norm(o, r) for o, r in zip(ops, got, strict=True)] == [
            _norm(o, r) for o, r in zip(ops, want, strict=True)
        ]


def _plain(result: Any) -> Any:
    if isinstance(result, list):
        return [_plain(r) for r in result]
    if hasattr(result, "key"):
        return (tuple(result.namespace), result.key, result.value)
    return result
