"""The templates served by LangGraph's own server (``langgraph dev``), driven over HTTP.

The tests that start a server are marked ``server`` (about 15 s each; run them
with ``pytest -m server``). Each copies a template folder to a temporary directory, starts
``langgraph dev`` there on a free port of 127.0.0.1, waits for ``/ok``, talks
to it with ``langgraph-sdk`` and stops it with SIGTERM. The server's store
and checkpointer are hindsight-lg's (``hindsight_lg.deploy``), its memory a
Milvus Lite file in the temporary directory, its model the offline fake.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

langgraph_sdk = pytest.importorskip("langgraph_sdk")
pytest.importorskip("langgraph_api")

from hindsight_lg import HindsightMemory  # noqa: E402
from hindsight_lg.templates.customer_support import SCRIPT  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TOKENS = {"maya-token": "maya", "tom-token": "tom"}
FACT = "My sister Lena's wedding is in Lisbon on June 14."
QUESTION = "When is Lena's wedding?"
START_TIMEOUT = 120.0


@dataclass
class Server:
    """A running ``langgraph dev`` and where it keeps its memory."""

    url: str
    process: subprocess.Popen[bytes]
    folder: Path
    log: Path

    def stop(self) -> int:
        """SIGTERM, then wait for the process to exit by itself."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(
                f"langgraph dev ignored SIGTERM\n{self.tail()}"
            ) from None

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _langgraph() -> str:
    beside = Path(sys.executable).parent / "langgraph"
    return str(beside) if beside.exists() else shutil.which("langgraph") or "langgraph"


def _wait_healthy(server: Server) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise AssertionError(f"langgraph dev exited\n{server.tail()}")
        try:
            if httpx.get(f"{server.url}/ok", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    server.stop()
    raise AssertionError(
        f"langgraph dev not healthy in {START_TIMEOUT}s\n{server.tail()}"
    )


def _start(template: str, tmp_path: Path, config: str = "langgraph.json") -> Server:
    folder = tmp_path / template
    shutil.copytree(
        EXAMPLES / template,
        folder,
        ignore=shutil.ignore_patterns(".langgraph_api", "*.db", "*.sqlite*"),
    )
    env = {
        **os.environ,
        "HINDSIGHT_URI": str(tmp_path / "hindsight.db"),
        "HINDSIGHT_CHECKPOINTS": str(tmp_path / "checkpoints.sqlite"),
        "HINDSIGHT_EMBEDDER": "hashing",
        "HINDSIGHT_DEMO_TOKENS": ",".join(f"{t}:{u}" for t, u in TOKENS.items()),
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    }
    env.pop("HINDSIGHT_CHAT_MODEL", None)
    port = _free_port()
    log = tmp_path / "server.log"
    command = [_langgraph(), "dev", "--no-browser", "--no-reload"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--config", config]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, cwd=folder, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    server = Server(f"http://127.0.0.1:{port}", process, folder, log)
    _wait_healthy(server)
    return server


@pytest.fixture(scope="module")
def assistant_with_auth(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One authenticated assistant server for the tests that only talk to it."""
    server = _start("assistant", tmp_path_factory.mktemp("auth"), "langgraph.auth.json")
    yield server
    server.stop()


def _client(server: Server, token: str) -> Any:
    headers = {"Authorization": f"Bearer {token}"}
    return langgraph_sdk.get_client(url=server.url, headers=headers)


def _say(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


def _reply(state: Any) -> str:
    return str(state["messages"][-1]["content"])


async def _memories(client: Any, query: str | None = None) -> list[str]:
    found = await client.store.search_items(("memories",), query=query, limit=50)
    return [str(item["value"].get("content", "")) for item in found["items"]]


async def _until_captured(client: Any, words: str, timeout: float = 20.0) -> list[str]:
    """Captures run behind the turn: poll the store until ``words`` shows up."""
    deadline = time.monotonic() + timeout
    while True:
        contents = await _memories(client)
        if any(words in c for c in contents) or time.monotonic() > deadline:
            return contents
        await asyncio.sleep(0.25)


@pytest.mark.server
async def test_assistant_on_langgraph_server_keeps_users_apart(
    assistant_with_auth: Server,
) -> None:
    """Over HTTP a fact told in one thread is recalled in the user's next thread,
    listed through client.store, and never reaches another authenticated user."""
    maya = _client(assistant_with_auth, "maya-token")
    tom = _client(assistant_with_auth, "tom-token")
    first, second = await maya.threads.create(), await maya.threads.create()
    toms = await tom.threads.create()

    await maya.runs.wait(first["thread_id"], "assistant", input=_say(FACT))
    listed = await _until_captured(maya, "June 14")
    assert any("Lena" in c and "June 14" in c for c in listed), listed

    recalled = await maya.runs.wait(
        second["thread_id"], "assistant", input=_say(QUESTION)
    )
    assert "June 14" in _reply(recalled)

    # Tom asks the same, and even names Maya as the user: the auth identity wins.
    forged = {"configurable": {"user_id": "maya"}}
    answer = await tom.runs.wait(
        toms["thread_id"], "assistant", input=_say(QUESTION), config=forged
    )
    assert "June 14" not in _reply(answer)
    assert not any("June 14" in c for c in await _memories(tom))
    with pytest.raises(httpx.HTTPStatusError) as refused:
        await tom.store.search_items(("memories", "maya"))
    assert refused.value.response.status_code == 403
    with pytest.raises(httpx.HTTPStatusError) as hidden:
        await tom.threads.get(first["thread_id"])
    assert hidden.value.response.status_code == 404
    with pytest.raises(httpx.HTTPStatusError) as kept:
        await tom.threads.delete(first["thread_id"])
    assert kept.value.response.status_code == 404
    assert (await maya.threads.get(first["thread_id"]))["metadata"]["owner"] == "maya"


@pytest.mark.server
async def test_store_items_put_over_http_are_recalled_by_the_graph(
    assistant_with_auth: Server,
) -> None:
    """An item put through client.store is read back by get_item and recalled by a run."""
    maya = _client(assistant_with_auth, "maya-token")
    await maya.store.put_item(
        ("memories", "maya"), "drink", {"content": "Maya drinks jasmine tea."}
    )
    item = await maya.store.get_item(("memories", "maya"), "drink")
    assert item["value"] == {"content": "Maya drinks jasmine tea."}

    thread = await maya.threads.create()
    state = await maya.runs.wait(
        thread["thread_id"], "assistant", input=_say("What tea do I drink?")
    )
    assert "jasmine" in _reply(state)
    tom = _client(assistant_with_auth, "tom-token")
    assert not any("jasmine" in c for c in await _memories(tom, "tea"))


@pytest.mark.server
def test_deleted_thread_is_forgotten_and_stop_closes_the_memory(tmp_path: Path) -> None:
    """Deleting a thread over HTTP forgets what was captured from it; SIGTERM shuts
    langgraph dev down through the store, which closes the memory on disk."""
    server = _start("assistant", tmp_path)
    client = langgraph_sdk.get_sync_client(url=server.url)
    maya = {"configurable": {"user_id": "maya"}}
    kept, dropped = client.threads.create(), client.threads.create()
    client.runs.wait(kept["thread_id"], "assistant", input=_say(FACT), config=maya)
    secret = "My locker code is 4711."
    client.runs.wait(dropped["thread_id"], "assistant", input=_say(secret), config=maya)
    assert any("4711" in c for c in _stored(client, "maya", "4711")), "not captured"

    client.threads.delete(dropped["thread_id"])
    listed = _stored(client, "maya", "June 14")
    assert any("June 14" in c for c in listed) and not any("4711" in c for c in listed)

    # uvicorn re-raises SIGTERM once its shutdown is done: -SIGTERM is a clean stop.
    assert server.stop() in (0, -signal.SIGTERM)
    assert "deploy_memory_closed" in server.log.read_text(errors="replace")
    with HindsightMemory.from_uri(
        str(tmp_path / "hindsight.db"), embedder="hashing"
    ) as memory:
        contents = [r.content for r in memory.list_memories("maya", limit=50)]
    assert any("June 14" in c for c in contents), contents
    assert not any("4711" in c for c in contents), contents


def _stored(client: Any, user: str, words: str, timeout: float = 20.0) -> list[str]:
    """The user's memories as listed by the store API, once ``words`` shows up."""
    deadline = time.monotonic() + timeout
    while True:
        found = client.store.search_items(("memories", user), limit=50)["items"]
        contents = [str(item["value"].get("content", "")) for item in found]
        if any(words in c for c in contents) or time.monotonic() > deadline:
            return contents
        time.sleep(0.25)


@pytest.mark.server
def test_support_template_serves_with_context_identity(tmp_path: Path) -> None:
    """The support agent recalls a customer's contact preference in a new ticket, and
    only for that customer, with the user sent as the run's context."""
    server = _start("support", tmp_path)
    client = langgraph_sdk.get_sync_client(url=server.url)
    tickets = [client.threads.create() for _ in range(3)]
    (told_by, _, told), (asked_by, _, asked), (other, _, other_asked) = SCRIPT

    def ask(thread: dict[str, Any], user: str, text: str) -> str:
        state = client.runs.wait(
            thread["thread_id"], "support", input=_say(text), context={"user_id": user}
        )
        return _reply(state)

    assert "shipped" in ask(tickets[0], told_by, told)
    assert any("email" in c for c in _stored(client, told_by, "email")), "not captured"
    assert "email" in ask(tickets[1], asked_by, asked)
    assert "email" not in ask(tickets[2], other, other_asked)
    assert server.stop() in (0, -signal.SIGTERM)


@pytest.mark.server
def test_team_template_shares_team_scope_between_its_graphs(tmp_path: Path) -> None:
    """What the planner graph hears in team scope, the booker graph recalls; what
    the booker hears in private scope, the planner does not."""
    server = _start("team", tmp_path)
    client = langgraph_sdk.get_sync_client(url=server.url)
    user = {"configurable": {"user_id": "acme-travel-u1"}}
    planning, booking = client.threads.create(), client.threads.create()
    client.runs.wait(
        planning["thread_id"],
        "planner",
        input=_say("I need a trip to Kyoto in April; I only fly window seats."),
        config=user,
    )
    assert any("window" in c for c in _stored(client, "acme-travel-u1", "window"))
    state = client.runs.wait(
        booking["thread_id"],
        "booker",
        input=_say("Book the Kyoto flight: which seat does the client want?"),
        config=user,
    )
    assert "window" in _reply(state)

    # The booker's own turns are private to it: the planner never recalls them.
    note = client.threads.create()
    client.runs.wait(
        note["thread_id"],
        "booker",
        input=_say("Between us: the client tips generously."),
        config=user,
    )
    assert any("tips" in c for c in _stored(client, "acme-travel-u1", "tips"))
    asked = client.threads.create()
    state = client.runs.wait(
        asked["thread_id"],
        "planner",
        input=_say("Does the client tip generously?"),
        config=user,
    )
    assert "Between us" not in _reply(state)
    assert server.stop() in (0, -signal.SIGTERM)


@pytest.mark.parametrize(
    ("template", "config"),
    [
        ("assistant", "langgraph.json"),
        ("assistant", "langgraph.auth.json"),
        ("assistant", "langgraph.docker.json"),
        ("support", "langgraph.json"),
        ("team", "langgraph.json"),
    ],
)
def test_templates_build_into_a_server_image(
    template: str, config: str, tmp_path: Path
) -> None:
    """langgraph dockerfile accepts each config and bakes in our store (and saver)."""
    dockerfile = tmp_path / "Dockerfile"
    done = subprocess.run(
        [_langgraph(), "dockerfile", "--config", config, str(dockerfile)],
        cwd=EXAMPLES / template,
        env={**os.environ, "LANGGRAPH_CLI_NO_ANALYTICS": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    text = dockerfile.read_text()
    assert """ENV LANGGRAPH_STORE='{"path": "hindsight_lg.deploy.store"}'""" in text
    wanted = json.loads((EXAMPLES / template / config).read_text())
    assert ("hindsight_lg.deploy.checkpointer" in text) == ("checkpointer" in wanted)


@pytest.mark.parametrize(
    ("template", "module", "graphs"),
    [
        ("assistant", "assistant_graph", ["graph"]),
        ("support", "support_graph", ["graph"]),
        ("team", "team_graph", ["planner", "booker"]),
    ],
)
def test_template_graphs_leave_persistence_to_the_server(
    template: str,
    module: str,
    graphs: list[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each template's graphs compile without checkpointer or store (langgraph dev
    refuses graphs that bring their own) and share hindsight_lg.deploy's memory."""
    from langgraph.pregel import Pregel

    from hindsight_lg import deploy

    monkeypatch.setenv("HINDSIGHT_URI", ":memory:")
    monkeypatch.setenv("HINDSIGHT_EMBEDDER", "hashing")
    monkeypatch.delenv("HINDSIGHT_CHAT_MODEL", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES / template))
    deploy.close()
    try:
        loaded = importlib.import_module(module)
        for name in graphs:
            graph = getattr(loaded, name)
            assert isinstance(graph, Pregel)
            assert graph.checkpointer is None and graph.store is None
        config = json.loads((EXAMPLES / template / "langgraph.json").read_text())
        assert config["store"] == {"path": "hindsight_lg.deploy.store"}
        assert sorted(config["graphs"]) == sorted(
            {"graph": template}.get(g, g) for g in graphs
        )
    finally:
        sys.modules.pop(module, None)
        deploy.close()


@pytest.mark.server
async def test_threads_copy_and_streams_over_the_bridge(
    assistant_with_auth: Server,
) -> None:
    """threads.copy works with the bridging saver, and a messages-tuple stream
    carries the answer but never the memory block the model saw.

    A guard, not a reproduction: with langgraph-api 0.16.7 under ``langgraph dev``
    both held before the bridge stopped overriding optional methods; the unit tests
    in tests/checkpointers and tests/nodes/test_streams.py fail on the old code."""
    maya = _client(assistant_with_auth, "maya-token")
    told = await maya.threads.create()
    await maya.runs.wait(told["thread_id"], "assistant", input=_say(FACT))
    await _until_captured(maya, "June 14")

    copied = await maya.threads.copy(told["thread_id"])
    state = await maya.threads.get_state(copied["thread_id"])
    assert [m["content"] for m in state["values"]["messages"]][0] == FACT

    asked = await maya.threads.create()
    chunks = [
        chunk
        async for chunk in maya.runs.stream(
            asked["thread_id"],
            "assistant",
            input=_say(QUESTION),
            stream_mode="messages-tuple",
        )
    ]
    streamed = [c.data for c in chunks if c.event == "messages"]
    assert "June 14" in json.dumps(streamed)
    systems = [m for m, _meta in streamed if m.get("type") == "system"]
    assert "<memories>" not in json.dumps(systems)
    assert not any(
        "<memories>" in str(m.get("content"))
        for m, _ in streamed
        if m.get("type") != "ai"
    )


@pytest.mark.slow
def test_a_server_graph_imports_before_the_model_and_its_first_run_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Importing a template graph (what langgraph dev does before answering /ok)
    does not wait for MiniLM; a run made while the model loads waits for it
    outside its recall deadline and recalls what the store holds."""
    import gc
    import threading

    from hindsight_lg import deploy
    from hindsight_lg.embeddings import FlagEmbeddingEmbedder
    from hindsight_lg.memory import _wiring
    from hindsight_lg.memory.policy import Policy

    db = str(tmp_path / "hindsight.db")
    with HindsightMemory.from_uri(db, embedder="minilm", warm_up=False) as seed:
        seed.capture(FACT, namespace="maya")
    gate, load = threading.Event(), FlagEmbeddingEmbedder._load

    def gated(self: FlagEmbeddingEmbedder, device: str | None) -> Any:
        gate.wait(timeout=120)  # the model's load holds until the test opens it
        return load(self, device)

    deadline = 5.0  # a recall takes well under it; the run waits far longer

    class Deadline(Policy):
        __slots__ = ()

        def __init__(self, **kwargs: Any) -> None:
            kwargs.setdefault("recall_timeout_s", deadline)
            super().__init__(**kwargs)

    monkeypatch.setattr(FlagEmbeddingEmbedder, "_load", gated)
    monkeypatch.setattr(_wiring, "Policy", Deadline)
    monkeypatch.setenv("HINDSIGHT_URI", db)
    monkeypatch.delenv("HINDSIGHT_EMBEDDER", raising=False)  # the store's: MiniLM
    monkeypatch.delenv("HINDSIGHT_CHAT_MODEL", raising=False)
    monkeypatch.syspath_prepend(str(EXAMPLES / "assistant"))
    deploy.close()
    modules: list[Any] = []
    replies: list[str] = []
    importing = threading.Thread(
        target=lambda: modules.append(importlib.import_module("assistant_graph"))
    )
    try:
        importing.start()
        importing.join(timeout=30)
        imported_first = not importing.is_alive()
        embedder = deploy.memory().embedder
        loading = isinstance(embedder, FlagEmbeddingEmbedder) and not embedder.loaded
        if imported_first:
            running = threading.Thread(
                target=lambda: replies.append(
                    str(
                        modules[0]
                        .graph.invoke(
                            _say(QUESTION), {"configurable": {"user_id": "maya"}}
                        )["messages"][-1]
                        .content
                    )
                )
            )
            running.start()
            time.sleep(deadline + 1)  # the run has waited past its deadline
            gate.set()
            running.join(timeout=180)
        assert imported_first, "importing the graph waited for the model"
        assert loading
        assert replies and "June 14" in replies[0], replies
        assert deploy.warmed(timeout=60)
        assert embedder.loaded
    finally:
        gate.set()
        importing.join(timeout=180)
        sys.modules.pop("assistant_graph", None)
        deploy.close()
        gc.unfreeze()
