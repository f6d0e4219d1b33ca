"""The panel's roll back: one memory's write, or everything a thread wrote."""

from __future__ import annotations

from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory, Status
from tests.panel.conftest import csrf_of


def _move(memory: HindsightMemory) -> tuple[str, str]:
    """Paris, then a move to Berlin in thread t-move: (paris id, berlin id)."""
    (paris,) = memory.capture("I live in Paris.", namespace="maya", thread_id="t-home")
    (berlin,) = memory.capture(
        "I moved to Berlin, I live in Berlin now.", namespace="maya", thread_id="t-move"
    )
    assert memory.get("maya", paris.id).status is Status.SUPERSEDED  # type: ignore[union-attr]
    return paris.id, berlin.id


def test_a_memory_page_offers_roll_back_and_the_form_undoes_the_write(
    memory: HindsightMemory, client: TestClient
) -> None:
    """The button posts; the page it leads to is the memory made current again."""
    paris, berlin = _move(memory)
    page = client.get("/memory", params={"namespace": "maya", "id": berlin}).text
    assert "Roll back this write" in page
    resp = client.post(
        "/memory/rollback",
        data={"csrf": csrf_of(client), "namespace": "maya", "id": berlin},
        follow_redirects=False,
    )
    assert resp.status_code == 303, resp.text
    assert f"id={paris}" in resp.headers["location"]
    assert "rolled+back" in resp.headers["location"]
    assert memory.get("maya", paris).status is Status.ACTIVE  # type: ignore[union-attr]
    assert memory.get("maya", berlin).status is Status.ARCHIVED  # type: ignore[union-attr]


def test_a_thread_is_rolled_back_from_its_filtered_list(
    memory: HindsightMemory, client: TestClient
) -> None:
    """Filtering by thread shows the thread button; the JSON API does the same."""
    paris, berlin = _move(memory)
    page = client.get("/memories", params={"namespace": "maya", "thread": "t-move"})
    assert "Roll back everything thread" in page.text
    resp = client.post(
        "/api/thread/rollback",
        json={"namespace": "maya", "thread": "t-move"},
        headers={"X-CSRF-Token": csrf_of(client)},
    )
    assert resp.status_code == 200, resp.text
    assert {"archived": [berlin], "restored": [paris]} == {
        k: resp.json()[k] for k in ("archived", "restored")
    }


def test_roll_back_needs_the_csrf_token_and_a_thread(
    memory: HindsightMemory, client: TestClient
) -> None:
    """Without the token nothing changes; an empty thread is a 400 that says why."""
    _, berlin = _move(memory)
    resp = client.post(
        "/memory/rollback",
        data={"namespace": "maya", "id": berlin},
        follow_redirects=False,
    )
    assert resp.status_code == 403
    assert memory.get("maya", berlin).status is Status.ACTIVE  # type: ignore[union-attr]
    resp = client.post(
        "/api/thread/rollback",
        json={"namespace": "maya", "thread": " "},
        headers={"X-CSRF-Token": csrf_of(client)},
    )
    assert resp.status_code == 400 and "name the thread" in resp.text
