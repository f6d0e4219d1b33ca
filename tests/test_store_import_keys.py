"""Store items keep their keys through export and import into another namespace."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.memory import export_namespace, import_namespace
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

SOURCE, COPY = ("memories", "src"), ("memories", "copy")


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


@pytest.fixture
def store(memory: HindsightMemory) -> HindsightStore:
    """A store whose item k1 of user "src" was exported and imported as user "copy"."""
    store = HindsightStore(memory)
    store.put(SOURCE, "k1", {"content": "Maya flies window seats"})
    store.put(SOURCE, "k1", {"content": "Maya flies aisle seats"})
    copy_into(memory, "src", "copy")
    return store


def copy_into(memory: HindsightMemory, source: str, target: str) -> None:
    out = io.StringIO()
    export_namespace(memory, source, out)
    import_namespace(memory, out.getvalue().splitlines(), namespace=target)


def test_get_finds_an_imported_item_by_its_key(store: HindsightStore) -> None:
    """After import into another namespace, get(namespace, key) returns the item."""
    item = store.get(COPY, "k1")
    assert item is not None
    assert (item.namespace, item.key, item.value) == (
        COPY,
        "k1",
        {"content": "Maya flies aisle seats"},
    )


def test_a_put_overwrites_the_imported_item(store: HindsightStore) -> None:
    """A put to the imported key replaces the item: one k1, with the new value."""
    store.put(COPY, "k1", {"content": "Maya flies exit rows"})
    found = [(i.key, i.value["content"]) for i in store.search(COPY)]
    assert found == [("k1", "Maya flies exit rows")]


def test_a_delete_removes_the_imported_item(store: HindsightStore) -> None:
    """A delete of the imported key leaves nothing to get or search."""
    store.delete(COPY, "k1")
    assert (store.get(COPY, "k1"), store.search(COPY, query="seats")) == (None, [])


def test_the_imported_item_keeps_its_history(
    memory: HindsightMemory, store: HindsightStore
) -> None:
    """The audit trail of the item moves with it: both puts are found under its key."""
    item = store.get(COPY, "k1")
    assert item is not None
    record = memory.get("copy", item_record_id(memory, "copy"))
    assert record is not None
    ops = [a.op for a in memory.audit("copy", record.id)]
    assert ops == ["store_put", "store_put"]


def item_record_id(memory: HindsightMemory, namespace: str) -> str:
    """The id of the one record of ``namespace``."""
    (record,) = memory.list_memories(namespace)
    return record.id
