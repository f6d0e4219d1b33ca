"""``hindsight_lg.deploy``: what langgraph.json's store and checkpointer paths name."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import deploy
from hindsight_lg.checkpointers.aio import AsyncHindsightSaver
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import FakeToolChatModel, HashingEmbedder

pytest.importorskip("langgraph.checkpoint.sqlite.aio")


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.setenv("HINDSIGHT_URI", ":memory:")
    monkeypatch.setenv("HINDSIGHT_EMBEDDER", "hashing")
    monkeypatch.setenv("HINDSIGHT_CHECKPOINTS", str(tmp_path / "checkpoints.sqlite"))
    for name in ("HINDSIGHT_SPOOL", "HINDSIGHT_SAVER_CAPTURE", "HINDSIGHT_CHAT_MODEL"):
        monkeypatch.delenv(name, raising=False)
    deploy.close()
    yield
    deploy.close()


def test_memory_is_one_per_process_until_closed() -> None:
    """Every call returns the same engine; after close() a new one opens."""
    first = deploy.memory()
    assert deploy.memory() is first
    deploy.close()
    assert deploy.memory() is not first


def test_memory_loads_the_embedding_model_when_opened(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The model loads at start-up, not on the first request (whose recall would time out)."""
    embedded: list[list[str]] = []

    class Counting(HashingEmbedder):
        def embed(self, texts: Sequence[str]) -> Any:
            embedded.append(list(texts))
            return super().embed(texts)

    monkeypatch.setattr(
        "hindsight_lg.embeddings.embedder_from_name", lambda name: Counting()
    )
    deploy.memory()
    # The warm-up call first; then the wake rule's calibration pairs, measured
    # on the same model while opening.
    assert embedded and ["warm up"] == embedded[0]


def test_memory_takes_a_spool_for_a_server_uri_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """HINDSIGHT_SPOOL gives captures a spool file where the URI would not."""
    assert deploy.memory().spool is None
    deploy.close()
    monkeypatch.setenv("HINDSIGHT_SPOOL", str(tmp_path / "captures.spool"))
    assert deploy.memory().spool is not None


async def test_store_shares_the_memory_and_closes_it_on_exit() -> None:
    """The server's store is a HindsightStore over memory(); leaving it closes that memory."""
    async with deploy.store() as store:
        assert isinstance(store, HindsightStore)
        engine = deploy.memory()
        assert store.memory is engine
        await store.aput(("memories", "maya"), "tea", {"content": "Likes green tea"})
        found = engine.list_memories("maya", limit=10)
        assert [r.content for r in found] == ["Likes green tea"]
    assert deploy.memory() is not engine


async def test_checkpointer_bridges_to_the_same_memory(tmp_path: Path) -> None:
    """The server's saver wraps a SQLite saver, forgets on delete, shares memory()."""
    async with deploy.checkpointer() as saver:
        assert isinstance(saver, AsyncHindsightSaver)
        assert saver.memory is deploy.memory()
        assert saver.capture and saver.forget_on_delete
        assert await saver.aget_tuple({"configurable": {"thread_id": "t1"}}) is None
    assert (tmp_path / "checkpoints.sqlite").exists()


async def test_checkpointer_capture_can_be_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """HINDSIGHT_SAVER_CAPTURE=0 (or false) leaves capture to the graph's own nodes."""
    for off in ("0", "false"):
        monkeypatch.setenv("HINDSIGHT_SAVER_CAPTURE", off)
        async with deploy.checkpointer() as saver:
            assert isinstance(saver, AsyncHindsightSaver)
            assert not saver.capture


def test_chat_model_is_offline_unless_the_environment_names_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No HINDSIGHT_CHAT_MODEL: the fake (or the given offline one); else init_chat_model."""
    assert isinstance(deploy.chat_model(), FakeToolChatModel)
    scripted = FakeToolChatModel(responses=[])
    assert deploy.chat_model(offline=lambda: scripted) is scripted

    asked: list[str] = []

    def init_chat_model(name: str) -> Any:
        asked.append(name)
        return scripted

    monkeypatch.setattr("langchain.chat_models.init_chat_model", init_chat_model)
    monkeypatch.setenv("HINDSIGHT_CHAT_MODEL", "openai:gpt-4o-mini")
    assert deploy.chat_model(offline=lambda: None) is scripted
    assert asked == ["openai:gpt-4o-mini"]


async def test_async_paths_keep_spool_writes_off_the_event_loop(tmp_path: Path) -> None:
    """Under langgraph dev's blocking-call detector, nodes, middleware and the async
    saver capture (an fsync'd spool append) without blocking the event loop."""
    blockbuster = pytest.importorskip("blockbuster")
    from langchain.agents import create_agent
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import START, MessagesState, StateGraph

    from hindsight_lg import HindsightMemory
    from hindsight_lg.nodes import add_hindsight
    from hindsight_lg.nodes.middleware import HindsightMiddleware
    from hindsight_lg.testing import InMemoryBackend, echo_memories

    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), spool=str(tmp_path / "captures.spool")
    )
    model = FakeToolChatModel(respond=echo_memories)

    async def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    saver = AsyncHindsightSaver(InMemorySaver(), memory)
    graph = add_hindsight(builder, memory=memory).compile(checkpointer=saver)
    support = create_agent(model, middleware=[HindsightMiddleware(memory)])
    said = {"messages": [("user", "I'm allergic to peanuts")]}
    with blockbuster.blockbuster_ctx(["hindsight_lg", "langgraph", "langchain"]):
        await graph.ainvoke(said, {"configurable": {"thread_id": "t1", "user_id": "u"}})
        await support.ainvoke(said, {"configurable": {"user_id": "v"}})
    memory.flush()
    for user in ("u", "v"):
        contents = [r.content for r in memory.list_memories(user, limit=10)]
        assert any("peanuts" in c for c in contents), (user, contents)
    memory.close()
