"""``hindsight-lg panel --agent A`` serves agent A's view of the store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import main

MINE = "Agent A keeps the release checklist in the wiki"
THEIRS = "Agent B's launch plan: ship the beta in May"


def serve(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> dict[str, tuple[int, str]]:
    """Run the panel command with uvicorn replaced; what each request answered."""
    import uvicorn

    requests = {
        "list": "/api/memories?namespace=u1&status=all",
        "as B": "/api/memories?namespace=u1&agent=agentB",
    }
    answers: dict[str, tuple[int, str]] = {}

    def run(app: Any, **_: Any) -> None:
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            for name, url in requests.items():
                response = client.get(url)
                answers[name] = (response.status_code, response.text)

    monkeypatch.setattr(uvicorn, "run", run)
    assert 0 == main(argv)
    return answers


def test_panel_agent_option_hides_other_agents_private_memories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With --agent, the served panel lists that agent's memories, never another's."""
    uri = str(tmp_path / "agents.db")
    with HindsightMemory.from_uri(uri, embedder="hashing") as memory:
        memory.remember(MINE, namespace="u1", agent_id="agentA")
        memory.remember(THEIRS, namespace="u1", agent_id="agentB")
    argv = ["panel", "--uri", uri, "--embedder", "hashing", "--agent", "agentA"]
    answers = serve(argv, monkeypatch)
    status, listed = answers["list"]
    assert (200, True, False) == (status, MINE in listed, THEIRS in listed)
    assert 403 == answers["as B"][0]


def test_panel_without_agent_option_shows_every_agent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --agent, the served panel is the owner's view of every agent."""
    uri = str(tmp_path / "owner.db")
    with HindsightMemory.from_uri(uri, embedder="hashing") as memory:
        memory.remember(MINE, namespace="u1", agent_id="agentA")
        memory.remember(THEIRS, namespace="u1", agent_id="agentB")
    answers = serve(["panel", "--uri", uri, "--embedder", "hashing"], monkeypatch)
    status, listed = answers["list"]
    assert (200, True, True) == (status, MINE in listed, THEIRS in listed)
    assert 200 == answers["as B"][0]
