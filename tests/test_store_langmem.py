"""LangMem's memory tools over HindsightStore: they update and delete captured memories."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langmem import create_manage_memory_tool, create_search_memory_tool

from hindsight_lg import HindsightMemory
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import HashingEmbedder

NAMESPACE = ("memories", "{langgraph_user_id}")
RUN = {"configurable": {"langgraph_user_id": "u1"}}


@pytest.fixture
def memory(tmp_path: Any) -> Iterator[HindsightMemory]:
    engine = HindsightMemory.from_uri(
        str(tmp_path / "langmem.db"), embedder=HashingEmbedder()
    )
    yield engine
    engine.close()


def _captured(memory: HindsightMemory, text: str) -> str:
    memory.capture(text, namespace="u1")
    records = memory.list_memories("u1")
    assert len(records) == 1
    return records[0].id


def _active(memory: HindsightMemory) -> list[str]:
    return sorted(r.content for r in memory.list_memories("u1"))


def test_langmem_update_corrects_a_captured_memory(memory: HindsightMemory) -> None:
    """An update by the id LangMem's search gave changes that memory; no second copy."""
    _captured(memory, "My daughter Mia turns 7 on March 3.")
    store = HindsightStore(memory)
    search = create_search_memory_tool(NAMESPACE, store=store)
    manage = create_manage_memory_tool(NAMESPACE, store=store)
    found = search.invoke({"query": "Mia birthday"}, config=RUN)
    hits = found if isinstance(found, list) else __import__("json").loads(found)
    key = hits[0]["key"]
    answer = manage.invoke(
        {"action": "update", "id": key, "content": "Mia turns 7 on March 4."},
        config=RUN,
    )
    assert answer.startswith("updated memory")
    assert _active(memory) == ["Mia turns 7 on March 4."]


def test_langmem_delete_removes_a_captured_memory(memory: HindsightMemory) -> None:
    """A delete by id (LangMem sends it dashed, as a UUID) forgets the captured memory."""
    memory_id = _captured(memory, "My daughter Mia turns 7 on March 3.")
    manage = create_manage_memory_tool(NAMESPACE, store=HindsightStore(memory))
    answer = manage.invoke({"action": "delete", "id": memory_id}, config=RUN)
    assert answer.startswith("Deleted memory")
    assert _active(memory) == []


def test_langmem_round_trips_what_it_created(memory: HindsightMemory) -> None:
    """A memory LangMem created is updated and then deleted by its own id."""
    store = HindsightStore(memory)
    manage = create_manage_memory_tool(NAMESPACE, store=store)
    created = manage.invoke({"content": "Maya flies window seats."}, config=RUN)
    key = created.rsplit(" ", 1)[-1]
    manage.invoke(
        {"action": "update", "id": key, "content": "Maya flies aisle seats."},
        config=RUN,
    )
    assert [i.value["content"] for i in store.search(("memories", "u1"))] == [
        "Maya flies aisle seats."
    ]
    manage.invoke({"action": "delete", "id": key}, config=RUN)
    assert store.search(("memories", "u1")) == []


def test_a_custom_tool_finds_the_current_users_items(memory: HindsightMemory) -> None:
    """The docs' recipe: find_identity(get_config()) + ("memories", user_id) in a tool."""
    from langchain_core.tools import tool
    from langgraph.config import get_config, get_store
    from langgraph.graph import START, StateGraph
    from typing_extensions import TypedDict

    from hindsight_lg.identity import find_identity

    @tool
    def my_notes(query: str) -> list[str]:
        """What the app stored about the current user that matches the query."""
        who = find_identity(get_config())
        if who is None:
            return []
        items = get_store().search(("memories", who.user_id), query=query, limit=5)
        return [str(item.value.get("content")) for item in items]

    class State(TypedDict):
        notes: list[str]

    def node(state: State) -> dict[str, Any]:
        return {"notes": my_notes.invoke({"query": "seat"})}

    store = HindsightStore(memory)
    store.put(("memories", "u1"), "seat", {"content": "Maya flies window seats."})
    store.put(("memories", "u2"), "seat", {"content": "Tom flies aisle seats."})
    builder = StateGraph(State)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    graph = builder.compile(store=store)
    out = graph.invoke({"notes": []}, {"configurable": {"user_id": "u1"}})
    assert out["notes"] == ["Maya flies window seats."]
