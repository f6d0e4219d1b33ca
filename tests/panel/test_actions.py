"""The panel's actions: a correction is read from its own words, a listed id works."""

from __future__ import annotations

from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory
from hindsight_lg.panel import create_app
from tests.panel.conftest import csrf_of


def _correct(client: TestClient, memory_id: str, text: str) -> dict[str, object]:
    resp = client.post(
        "/api/memory/correct",
        json={"namespace": "maya", "id": memory_id, "text": text},
        headers={"X-CSRF-Token": csrf_of(client)},
    )
    assert resp.status_code == 200, resp.text
    return dict(resp.json())


def test_a_correction_names_the_new_place_not_the_old(
    memory: HindsightMemory, client: TestClient
) -> None:
    """Correcting Berlin to Munich by the listed short id keeps Munich, not Berlin."""
    [old] = memory.capture("I live in Berlin.", namespace="maya", speaker="Maya")
    done = _correct(client, old.id[:8], "I live in Munich.")
    shown = done["memory"]
    assert isinstance(shown, dict)
    new, before = memory.get("maya", shown["id"]), memory.get("maya", old.id)
    assert new is not None and ["Munich"] == new.entities
    assert before is not None and new.id == before.superseded_by


def test_an_agents_panel_resolves_no_prefix_of_anothers_memory(
    memory: HindsightMemory,
) -> None:
    """A prefix of another agent's private memory is a 404 in an agent's panel."""
    private = memory.remember("Maya's PIN is 1234", namespace="maya", agent_id="a")
    app = create_app(memory, agent_id="b")
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        resp = client.post(
            "/api/memory/restore",
            json={"namespace": "maya", "id": private.id[:8]},
            headers={"X-CSRF-Token": csrf_of(client)},
        )
    assert 404 == resp.status_code
