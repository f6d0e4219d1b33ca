"""A user's store namespace holds app items and captured memories; each side on demand."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.store import ORIGIN, HindsightItem, HindsightStore
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

USER = ("memories", "u1")
APP_VALUE = {"content": "The user's favourite city is Porto", "tag": "travel"}
CAPTURED = "I prefer green tea over coffee"


@pytest.fixture(params=["memory", "milvus-lite"])
def memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HindsightMemory]:
    """The reference backend and a real Milvus Lite file, same assertions for each."""
    if request.param == "memory":
        engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    else:
        engine = HindsightMemory.from_uri(str(tmp_path / "m.db"), embedder="hashing")
    yield engine
    engine.close()


@pytest.fixture
def store(memory: HindsightMemory) -> HindsightStore:
    """A store whose user namespace holds one app item and one captured memory."""
    store = HindsightStore(memory)
    store.put(USER, "city", dict(APP_VALUE))
    memory.capture(CAPTURED, namespace="u1")
    return store


def _origins(items: list[Any]) -> list[tuple[str, str]]:
    return sorted((i.value["content"], i.origin) for i in items)


def test_search_without_origin_returns_both_sides_each_labelled(
    store: HindsightStore,
) -> None:
    """The default stays both sides; every item says which side it is."""
    items = store.search(USER)
    assert all(isinstance(i, HindsightItem) for i in items)
    assert _origins(items) == sorted(
        [(APP_VALUE["content"], "app"), (CAPTURED, "captured")]
    )


def test_origin_filter_picks_one_side(store: HindsightStore) -> None:
    """filter={"$origin": ...} returns only app items, or only captured memories."""
    app = store.search(USER, filter={ORIGIN: "app"})
    captured = store.search(USER, filter={ORIGIN: "captured"})
    assert [(i.key, i.value, i.origin) for i in app] == [("city", APP_VALUE, "app")]
    assert [(i.value["content"], i.origin) for i in captured] == [
        (CAPTURED, "captured")
    ]


def test_origin_filter_holds_for_query_search(store: HindsightStore) -> None:
    """A query search ranks within the side asked for, even when the other matches better."""
    hits = store.search(USER, query="green tea over coffee", filter={ORIGIN: "app"})
    assert [(h.key, h.origin) for h in hits] == [("city", "app")]
    assert hits[0].score is not None
    hits = store.search(USER, query="favourite city Porto", filter={ORIGIN: "captured"})
    assert [(h.value["content"], h.origin) for h in hits] == [(CAPTURED, "captured")]


def test_origin_combines_with_value_filters_limit_and_offset(
    store: HindsightStore,
) -> None:
    """The rest of the filter still applies, and paging counts only the chosen side."""
    store.put(USER, "drink", {"content": "Orders oolong", "tag": "food"})
    tagged = store.search(USER, filter={ORIGIN: "app", "tag": "travel"})
    assert [i.key for i in tagged] == ["city"]
    assert store.search(USER, filter={ORIGIN: "captured", "tag": "travel"}) == []
    kinds = store.search(USER, filter={ORIGIN: "captured", "kind": "preference"})
    assert [i.value["content"] for i in kinds] == [CAPTURED]
    first = store.search(USER, filter={ORIGIN: "captured"}, limit=1)
    assert [i.origin for i in first] == ["captured"]
    paged = store.search(USER, filter={ORIGIN: "app"}, limit=1, offset=1)
    assert [i.key for i in paged] == ["drink"]


def test_get_labels_the_item_and_app_values_stay_as_put(
    store: HindsightStore,
) -> None:
    """get says the origin too, and an app's value gains no key."""
    app = store.get(USER, "city")
    assert isinstance(app, HindsightItem)
    assert (app.value, app.origin) == (APP_VALUE, "app")
    captured_key = store.search(USER, filter={ORIGIN: "captured"})[0].key
    captured = store.get(USER, captured_key)
    assert isinstance(captured, HindsightItem) and captured.origin == "captured"
    assert "origin" not in app.dict() and ORIGIN not in app.value


def test_an_apps_own_origin_field_is_an_ordinary_value_filter(
    memory: HindsightMemory,
) -> None:
    """Only "$origin" is reserved: a field named origin in values filters as usual."""
    store = HindsightStore(memory)
    store.put(("docs",), "a", {"content": "from the web", "origin": "web"})
    store.put(("docs",), "b", {"content": "from mail", "origin": "mail"})
    assert [i.key for i in store.search(("docs",), filter={"origin": "web"})] == ["a"]


@pytest.mark.parametrize("bad", ["apps", "App", "", 1, None, ["app"], {"$eq": "app"}])
def test_bad_origin_values_are_refused_with_the_choices(
    store: HindsightStore, bad: Any
) -> None:
    """An $origin other than "app"/"captured" is a ValueError naming both."""
    with pytest.raises(ValueError, match='"app".*"captured"'):
        store.search(USER, filter={ORIGIN: bad})


async def test_async_search_honours_origin(store: HindsightStore) -> None:
    """asearch takes the same filter as search."""
    items = await store.asearch(USER, filter={ORIGIN: "captured"})
    assert [i.value["content"] for i in items] == [CAPTURED]
