"""HindsightStore behaves like LangGraph's InMemoryStore, over hindsight-lg memory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.store.memory import InMemoryStore

from hindsight_lg import HindsightMemory
from hindsight_lg.store import HindsightStore, labels_of, tenant_of
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


@pytest.fixture(params=["langgraph-inmemory", "hindsight"])
def store(request: pytest.FixtureRequest, memory: HindsightMemory) -> BaseStore:
    """The reference store and ours: every behaviour test runs on both."""
    if request.param == "hindsight":
        return HindsightStore(memory)
    return InMemoryStore()


def test_put_get_overwrite_delete(store: BaseStore) -> None:
    """put stores a value, a second put replaces it, put(None)/delete removes it."""
    ns = ("u1", "notes")
    store.put(ns, "k", {"content": "likes tea"})
    store.put(ns, "k", {"content": "likes coffee"})
    item = store.get(ns, "k")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (
        ns,
        "k",
        {"content": "likes coffee"},
    )
    store.delete(ns, "k")
    assert store.get(ns, "k") is None
    assert store.get(ns, "missing") is None


def test_search_filters_by_prefix_and_value(store: BaseStore) -> None:
    """search returns the prefix's items matching the filter, operators included."""
    store.put(("u1", "notes"), "a", {"content": "tea", "n": 1, "tag": "x"})
    store.put(("u1", "notes"), "b", {"content": "coffee", "n": 5, "tag": "x"})
    store.put(("u1", "todo"), "c", {"content": "buy milk", "n": 9, "tag": "y"})
    store.put(("u2", "notes"), "d", {"content": "tea", "n": 1, "tag": "x"})
    keys = {i.key for i in store.search(("u1",), filter={"tag": "x"})}
    assert keys == {"a", "b"}
    keys = {i.key for i in store.search(("u1",), filter={"n": {"$gte": 5}})}
    assert keys == {"b", "c"}
    assert [i.key for i in store.search(("u1", "todo"))] == ["c"]


def test_search_limit_and_offset(store: BaseStore) -> None:
    """limit and offset page through results without overlap."""
    for n in range(5):
        store.put(("u1",), f"k{n}", {"content": f"note {n}"})
    first = [i.key for i in store.search(("u1",), limit=2)]
    rest = [i.key for i in store.search(("u1",), limit=10, offset=2)]
    assert len(first) == 2 and len(rest) == 3
    assert set(first).isdisjoint(rest)


def test_list_namespaces_prefix_and_depth(store: BaseStore) -> None:
    """list_namespaces honours prefix and max_depth."""
    for ns in [("u1", "notes"), ("u1", "todo"), ("u2", "notes")]:
        store.put(ns, "k", {"content": "x"})
    assert store.list_namespaces(prefix=("u1",)) == [("u1", "notes"), ("u1", "todo")]
    assert store.list_namespaces(max_depth=1) == [("u1",), ("u2",)]
    assert store.list_namespaces(suffix=("notes",)) == [
        ("u1", "notes"),
        ("u2", "notes"),
    ]


def test_query_ranks_the_matching_item_first(memory: HindsightMemory) -> None:
    """A semantic query puts the item about it first, with a score."""
    store = HindsightStore(memory)
    store.put(("u1",), "tea", {"content": "The user drinks jasmine tea every morning"})
    store.put(("u1",), "car", {"content": "The user drives a blue bicycle to work"})
    hits = store.search(("u1",), query="what tea does the user drink")
    assert hits[0].key == "tea"
    assert hits[0].score is not None and hits[0].score > (hits[1].score or 0.0)


def test_captured_memories_are_visible_as_items(memory: HindsightMemory) -> None:
    """Memories the engine captured appear under ("memories", user_id)."""
    memory.capture("I prefer green tea over coffee", namespace="u1")
    assert HindsightStore(memory).search(("u1",)) == []
    items = HindsightStore(memory).search(("memories", "u1"))
    assert [i.value["content"] for i in items] == ["I prefer green tea over coffee"]
    assert items[0].value["kind"] == "preference"


async def test_async_twins(memory: HindsightMemory) -> None:
    """aput / aget / asearch work through abatch."""
    store = HindsightStore(memory)
    await store.aput(("u1",), "k", {"content": "likes tea"})
    item = await store.aget(("u1",), "k")
    assert item is not None and item.value == {"content": "likes tea"}
    assert [i.key for i in await store.asearch(("u1",))] == ["k"]


def test_runtime_store_in_a_compiled_graph(memory: HindsightMemory) -> None:
    """compile(store=HindsightStore) gives nodes runtime.store over the memory."""
    store = HindsightStore(memory)

    def node(state: MessagesState, runtime: Runtime[Any]) -> dict[str, Any]:
        assert runtime.store is not None
        runtime.store.put(("u1", "facts"), "city", {"content": "lives in Porto"})
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("write", node)
    builder.add_edge(START, "write")
    builder.compile(store=store).invoke({"messages": []})
    item = store.get(("u1", "facts"), "city")
    assert item is not None and item.value["content"] == "lives in Porto"


def test_store_on_milvus_lite(tmp_path: Path) -> None:
    """The store round-trips and searches on a real Milvus Lite file."""
    memory = HindsightMemory.from_uri(str(tmp_path / "m.db"), embedder="hashing")
    try:
        store = HindsightStore(memory)
        store.put(("u1", "notes"), "tea", {"content": "drinks jasmine tea"})
        store.put(("u1", "notes"), "tea", {"content": "drinks oolong tea"})
        item = store.get(("u1", "notes"), "tea")
        assert item is not None and item.value["content"] == "drinks oolong tea"
        hits = store.search(("u1",), query="oolong tea")
        assert [h.key for h in hits] == ["tea"]
        assert store.list_namespaces() == [("u1", "notes")]
    finally:
        memory.close()


_LABEL = st.text(min_size=1, max_size=12).filter(
    lambda s: "." not in s and "\x00" not in s
)
_NAMESPACE = st.lists(_LABEL, min_size=1, max_size=3).map(tuple)


def test_user_layout_is_the_user_tenant_and_other_tuples_are_encoded() -> None:
    """("memories", user) is the user's own tenant; other tuples get a marked path."""
    assert tenant_of(("memories", "u42")) == "u42"
    assert tenant_of(("memories", "maya@x.com")) == "maya@x.com"
    assert tenant_of(("u42", "notes")) == "%/u42/notes"
    assert labels_of("bob.smith") == ("memories", "bob.smith")
    assert labels_of("%/u42/notes") == ("u42", "notes")


@settings(max_examples=25, deadline=None)
@given(_NAMESPACE.filter(lambda ns: ns[0] != "langgraph"))
def test_put_then_list_namespaces_and_get_round_trip(
    namespace: tuple[str, ...],
) -> None:
    """An item put under odd labels is listed under, and read back from, the same tuple."""
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as engine:
        store = HindsightStore(engine)
        store.put(namespace, "k", {"content": "hello"})
        assert namespace in store.list_namespaces()
        item = store.get(namespace, "k")
        assert item is not None and item.namespace == namespace


def test_put_items_do_not_decay_out_of_search(memory: HindsightMemory) -> None:
    """An item the app put stays in search after decay() years later, like get."""
    store = HindsightStore(memory)
    store.put(("memories", "u1"), "city", {"content": "lives in Porto"})
    memory.decay(now=memory.clock() + 10 * 365 * 86400)
    assert [i.key for i in store.search(("memories", "u1"))] == ["city"]
    assert [i.key for i in store.search(("memories", "u1"), query="Porto")] == ["city"]


def test_unindexed_items_come_back_from_query_search_without_score(
    memory: HindsightMemory,
) -> None:
    """index=False items follow the scored ones with score None, as in InMemoryStore."""
    store = HindsightStore(memory)
    store.put(("docs",), "raw", {"content": "jasmine tea notes"}, index=False)
    store.put(("docs",), "tea", {"content": "jasmine tea every morning"})
    hits = store.search(("docs",), query="jasmine tea")
    assert [(h.key, h.score is None) for h in hits] == [("tea", False), ("raw", True)]


def test_query_scores_are_similarities_comparable_across_namespaces(
    memory: HindsightMemory,
) -> None:
    """The same text scores the same in a crowded and in a lonely namespace."""
    store = HindsightStore(memory)
    for n in range(8):
        store.put(("crowded",), f"k{n}", {"content": f"jasmine tea note {n}"})
    store.put(("crowded",), "same", {"content": "drinks oolong tea"})
    store.put(("lonely",), "same", {"content": "drinks oolong tea"})
    hits = {
        h.namespace: h.score
        for h in store.search((), query="oolong")
        if h.key == "same"
    }
    assert hits[("crowded",)] == pytest.approx(hits[("lonely",)])
    assert -1.0 <= hits[("lonely",)] <= 1.0


def test_ttl_expires_refreshes_and_sweeps() -> None:
    """ttl= hides an item once expired, refresh_ttl on read extends it, sweep deletes."""
    now = [1_700_000_000.0]
    with HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=lambda: now[0]
    ) as engine:
        store = HindsightStore(engine)
        assert store.supports_ttl
        store.put(("docs",), "short", {"content": "a"}, ttl=1)
        store.put(("docs",), "kept", {"content": "b"}, ttl=1)
        store.put(("docs",), "forever", {"content": "c"})
        now[0] += 45
        assert store.get(("docs",), "kept", refresh_ttl=True) is not None
        now[0] += 45  # 90 s after the put: "short" is gone, "kept" was refreshed
        assert store.get(("docs",), "short", refresh_ttl=False) is None
        keys = {i.key for i in store.search(("docs",), refresh_ttl=False)}
        assert keys == {"kept", "forever"}
        now[0] += 120
        assert store.sweep_ttl() == 2
        assert [i.key for i in store.search(("docs",))] == ["forever"]


def test_items_under_the_user_layout_are_recalled_by_the_nodes(
    memory: HindsightMemory,
) -> None:
    """What an app puts under ("memories", user) is recalled for that user."""
    store = HindsightStore(memory)
    store.put(("memories", "u1"), "diet", {"content": "The user is vegetarian"})
    store.put(("u1",), "other", {"content": "The user is vegan"})
    recalled = memory.recall("is the user vegetarian", namespace="u1").records
    assert [r.content for r in recalled] == ["The user is vegetarian"]


def test_a_put_reads_the_ids_its_key_may_name_at_once() -> None:
    """A put of a new key looks up every id it may name in one store read (on a
    server each read is a round trip)."""
    from hindsight_lg.backends import ForwardingBackend

    class Counting(ForwardingBackend):
        gets = 0

        def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
            self.gets += name == "get"
            return super()._forward(name, *args, **kwargs)

    backend = Counting(InMemoryBackend())
    with HindsightMemory(backend, HashingEmbedder(), cache=False) as memory:
        store = HindsightStore(memory)
        key = "7d4c8e1a-1f2b-4c3d-9e8f-0a1b2c3d4e5f"  # names an item and two ids
        store.put(("memories", "u1"), "other", {"text": "I like tea"})
        before = backend.gets
        store.put(("memories", "u1"), key, {"text": "I like green tea"})
        assert 1 == backend.gets - before
        assert "I like green tea" == store.get(("memories", "u1"), key).value["text"]
