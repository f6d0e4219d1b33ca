"""``hindsight_lg.deploy``: what langgraph.json's store and checkpointer paths name."""

from __future__ import annotations

import threading
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


class Gated(HashingEmbedder):
    """A model whose first embed (the load, in a real one) waits for ``gate``."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.embedded: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Any:
        if not self.gate.wait(timeout=60):
            raise TimeoutError("the test never opened the gate")
        self.embedded.append(list(texts))
        return super().embed(texts)


def test_memory_opens_before_the_model_loads_and_loads_it_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """memory() returns while the model is still loading (a server answers /ok at
    once); the warm-up finishes in the background, then on_warm callbacks run."""
    model = Gated()
    monkeypatch.setattr(
        "hindsight_lg.embeddings.embedder_from_name", lambda name: model
    )
    opened: list[object] = []
    opening = threading.Thread(target=lambda: opened.append(deploy.memory()))
    opening.start()
    opening.join(timeout=10)
    returned_first = not opening.is_alive()
    model.gate.set()  # the old code waits here for the model; let it end
    opening.join(timeout=60)
    assert returned_first, "memory() waited for the model"
    assert model.embedded == [] or model.embedded[0] == ["warm up"]
    after: list[str] = []
    deploy.on_warm(lambda: after.append("warm"))
    assert deploy.warmed(timeout=30)
    assert model.embedded[0] == ["warm up"]
    assert after == ["warm"]
    deploy.on_warm(lambda: after.append("at once"))  # already warm: runs now
    assert after == ["warm", "at once"]


def test_warmed_is_false_before_memory_is_opened() -> None:
    """Nothing warms before the first memory() call, so warmed() does not wait."""
    assert not deploy.warmed(timeout=0)


def test_a_failed_warm_up_leaves_the_memory_open_and_the_error_for_recall(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model that cannot load does not stop the server: the warm-up ends, work
    that embeds nothing runs, and the first recall raises the model's error."""

    class Broken(HashingEmbedder):
        def embed(self, texts: Sequence[str]) -> Any:
            raise RuntimeError("no weights here")

    monkeypatch.setattr(
        "hindsight_lg.embeddings.embedder_from_name", lambda name: Broken()
    )
    engine = deploy.memory()
    assert deploy.warmed(timeout=30)
    assert engine.list_memories("maya", limit=1) == []
    with pytest.raises(RuntimeError, match="no weights here"):
        engine.recall("tea?", namespace="maya")


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
