"""A panel for one agent (create_app(agent_id=...)) never shows or changes what
is private to another agent."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory
from hindsight_lg.panel import create_app

SECRET = "Agent A's launch plan: ship the beta in May"


@dataclass
class Ids:
    """The private memory of agent A and the shared memory that superseded it."""

    secret: str
    shared: str


@pytest.fixture
def ids(memory: HindsightMemory) -> Ids:
    memory.capture("I live in Paris.", namespace="u1", agent_id="agentA")
    memory.capture("I live in Rome now.", namespace="u1")
    secret = memory.remember(SECRET, namespace="u1", agent_id="agentA")
    (shared,) = [r for r in memory.list_memories("u1") if not r.agent_id]
    return Ids(secret.id, shared.id)


@pytest.fixture
def agent_b(memory: HindsightMemory, ids: Ids) -> Iterator[TestClient]:
    """The panel of agent B over user u1."""
    app = create_app(memory, namespace="u1", agent_id="agentB")
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        yield client


def hidden_ids(memory: HindsightMemory) -> list[str]:
    """Every memory of u1 that is private to agent A, superseded ones included."""
    return [r.id for r in memory.list_memories("u1", history=True) if r.agent_id]


def test_lists_and_searches_leave_out_another_agents_memories(
    memory: HindsightMemory, agent_b: TestClient
) -> None:
    """Pages, the JSON list, search and the counts show agent B nothing of A's."""
    pages = [
        agent_b.get("/memories", params={"namespace": "u1", "status": "all"}).text,
        agent_b.get("/api/memories", params={"status": "all"}).text,
        agent_b.get("/search", params={"q": "launch plan Paris"}).text,
        agent_b.get("/api/search", params={"q": "launch plan Paris"}).text,
    ]
    for text in pages:
        assert "ship the beta" not in text and "I live in Paris" not in text
        assert not any(i in text for i in hidden_ids(memory))
    counts = agent_b.get("/api/namespaces").json()["namespaces"]
    assert [(c["namespace"], c["total"]) for c in counts] == [("u1", 1)]


def test_another_agents_memory_is_not_found_by_id(
    memory: HindsightMemory, agent_b: TestClient, ids: Ids
) -> None:
    """Its page, its JSON and every action on it answer 404; it stays as it was."""
    assert agent_b.get("/memory", params={"id": ids.secret}).status_code == 404
    assert agent_b.get("/api/memory", params={"id": ids.secret}).status_code == 404
    token = agent_b.get("/api/session").json()["csrf_token"]
    for action in ("delete", "correct", "restore"):
        answer = agent_b.post(
            f"/api/memory/{action}",
            json={"id": ids.secret, "text": "overwritten by B"},
            headers={"X-CSRF-Token": token},
        )
        assert answer.status_code == 404
    kept = memory.get("u1", ids.secret)
    assert kept is not None and (kept.content, kept.status.value) == (SECRET, "active")


def test_a_shared_memory_page_names_no_hidden_memory(
    memory: HindsightMemory, agent_b: TestClient, ids: Ids
) -> None:
    """The page of the memory that superseded A's lists no link or id of it."""
    page = agent_b.get("/memory", params={"id": ids.shared})
    data = agent_b.get("/api/memory", params={"id": ids.shared}).json()
    assert page.status_code == 200 and data["memory"]["id"] == ids.shared
    for text in (page.text, str(data)):
        assert "I live in Paris" not in text
        assert not any(i in text for i in hidden_ids(memory))


def test_the_agent_filter_cannot_name_another_agent(agent_b: TestClient) -> None:
    """Asking agent B's panel to read as agent A is refused."""
    answer = agent_b.get("/api/memories", params={"agent": "agentA"})
    assert answer.status_code == 403
