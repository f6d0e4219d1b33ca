"""The panel's pages and JSON API: views, filters, paging, actions."""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory, Kind, MemoryRecord, Status
from hindsight_lg.panel import _views as views
from hindsight_lg.panel import create_app
from tests.panel.conftest import Seeded, csrf_of


def _ids_on(html: str) -> set[str]:
    return set(re.findall(r"id=([0-9a-f]{32})", html))


def test_home_lists_namespaces_with_counts(client: TestClient) -> None:
    """The home page lists every namespace with its active and total counts."""
    data = client.get("/api/namespaces").json()["namespaces"]
    by_name = {row["namespace"]: row for row in data}
    assert set(by_name) == {"maya", "bob"}
    assert by_name["maya"]["total"] == by_name["maya"]["active"] + 1  # one archived
    page = client.get("/").text
    assert "maya" in page and "bob" in page


def test_namespace_view_groups_by_kind(client: TestClient, seeded: Seeded) -> None:
    """The namespace page has one section per kind present, with its memories."""
    page = client.get("/memories", params={"namespace": "maya"}).text
    sections = re.findall(r'id="kind-(\w+)"', page)
    assert {"fact", "rule", "experience"} <= set(sections)
    assert seeded.wrong in _ids_on(page)
    assert seeded.archived not in _ids_on(page)  # active only by default
    assert "unverified" in page


def test_status_filter_shows_history(client: TestClient, seeded: Seeded) -> None:
    """Filtering by status shows archived (and superseded) memories."""
    page = client.get(
        "/memories", params={"namespace": "maya", "status": "archived"}
    ).text
    assert _ids_on(page) == {seeded.archived}


def test_thread_and_agent_filters(memory: HindsightMemory, client: TestClient) -> None:
    """The thread filter keeps one thread's memories; the agent filter its view."""
    page = client.get("/memories", params={"namespace": "maya", "thread": "t-2"}).text
    shown = [memory.get("maya", i) for i in _ids_on(page)]
    assert shown and all(r is not None and r.thread_id == "t-2" for r in shown)
    secret = memory.remember("planner's private note", namespace="maya", agent_id="a")
    other = client.get("/memories", params={"namespace": "maya", "agent": "b"}).text
    mine = client.get("/memories", params={"namespace": "maya", "agent": "a"}).text
    assert secret.id not in _ids_on(other) and secret.id in _ids_on(mine)


def test_unknown_filter_is_a_400(client: TestClient) -> None:
    """An unknown kind is refused with a message naming the valid ones."""
    resp = client.get("/api/memories", params={"namespace": "maya", "kind": "nope"})
    assert resp.status_code == 400 and "preference" in resp.json()["error"]


def _walk(memory: HindsightMemory, namespace: str, size: int) -> list[str]:
    seen: list[str] = []
    cursor: views.Cursor | None = None
    for _ in range(1000):
        page = views.page(
            memory,
            namespace,
            views.Filters(kind="fact").where(),
            size=size,
            before=cursor,
        )
        seen += [r.id for r in page.memories]
        assert len(page.memories) <= size
        if page.next_cursor is None:
            return seen
        cursor = views.parse_cursor(page.next_cursor)
    raise AssertionError("paging did not end")


def test_paging_visits_every_memory_once_even_with_ties(
    memory: HindsightMemory,
) -> None:
    """Cursor paging returns each memory exactly once, timestamps shared or not."""
    records = [
        MemoryRecord(
            namespace="big",
            content=f"fact {i}",
            kind=Kind.FACT,
            event_time=1000.0 + (i // 7 if i < 70 else 500),  # runs of ties
            dense=[1.0] + [0.0] * 383,
        )
        for i in range(130)
    ]
    memory.backend.upsert("big", records)
    for size in (5, 10, 50):
        walked = _walk(memory, "big", size)
        assert sorted(walked) == sorted(r.id for r in records)


def test_memories_sharing_one_timestamp_respect_the_page_size(
    memory: HindsightMemory, client: TestClient
) -> None:
    """600 memories of one instant come one asked-for page at a time, all of them."""
    records = [
        MemoryRecord(
            namespace="tied",
            content=f"fact {i}",
            kind=Kind.FACT,
            event_time=1000.0,
            dense=[1.0] + [0.0] * 383,
        )
        for i in range(600)
    ]
    memory.backend.upsert("tied", records)
    params: dict[str, object] = {"namespace": "tied", "limit": 1}
    body = client.get("/api/memories", params=params).json()
    assert len(body["memories"]) == 1 and body["next"]
    seen = set()
    for _ in range(700):
        seen |= {m["id"] for m in body["memories"]}
        if body["next"] is None:
            break
        params = {"namespace": "tied", "limit": 100, "before": body["next"]}
        body = client.get("/api/memories", params=params).json()
        assert len(body["memories"]) <= 100
    assert seen == {r.id for r in records}


def test_api_memories_pages_with_a_cursor(
    memory: HindsightMemory, client: TestClient
) -> None:
    """The JSON list returns pages of the asked size and a cursor until the last."""
    memory.backend.upsert(
        "paged",
        [
            MemoryRecord(
                namespace="paged",
                content=f"fact {i}",
                kind=Kind.FACT,
                event_time=1000.0 + i,
                dense=[1.0] + [0.0] * 383,
            )
            for i in range(7)
        ],
    )
    seen: list[str] = []
    params: dict[str, object] = {"namespace": "paged", "limit": 3}
    for expected in (3, 3, 1):
        body = client.get("/api/memories", params=params).json()
        assert len(body["memories"]) == expected
        seen += [m["content"] for m in body["memories"]]
        params["before"] = body["next"]
    assert body["next"] is None
    assert seen == [f"fact {i}" for i in range(6, -1, -1)]


def test_memory_page_shows_sources_edges_and_audit(
    memory: HindsightMemory, client: TestClient
) -> None:
    """A memory's page shows its thread, message ids, edges as links and audit trail."""
    captured = memory.list_memories("maya", thread_id="t-1")[0]
    page = client.get("/memory", params={"namespace": "maya", "id": captured.id}).text
    assert "t-1" in page and "m-1" in page
    assert "create" in page or "capture" in page or "supersede" in page
    data = client.get("/api/memory", params={"namespace": "maya", "id": captured.id})
    body = data.json()
    assert body["memory"]["id"] == captured.id and body["audit"]


def test_correct_through_a_form(
    memory: HindsightMemory, client: TestClient, seeded: Seeded
) -> None:
    """A correction posted from the page supersedes the old memory and is recalled."""
    resp = client.post(
        "/memory/correct",
        data={
            "csrf": csrf_of(client),
            "namespace": "maya",
            "id": seeded.wrong,
            "text": "Maya's sister Lena is getting married in Lisbon",
        },
        follow_redirects=False,
    )
    assert resp.status_code == 303
    old = memory.get("maya", seeded.wrong)
    assert old is not None and old.status is Status.SUPERSEDED
    assert (
        old.superseded_by is not None and old.superseded_by in resp.headers["location"]
    )
    page = client.get(resp.headers["location"]).text
    assert "Lisbon" in page and "supersedes" in page
    found = client.get("/api/search", params={"namespace": "maya", "q": "Lena married"})
    ids = [m["memory"]["id"] for m in found.json()["memories"]]
    assert old.superseded_by in ids and seeded.wrong not in ids


def test_search_shows_per_path_scores(client: TestClient) -> None:
    """The search page runs recall with explain and shows each path's score."""
    page = client.get("/search", params={"namespace": "maya", "q": "Lena married"}).text
    assert "Porto" in page
    assert re.search(r"<span>(dense|lexical)</span> \d\.\d{3}", page)


def test_delete_needs_confirmation_then_forgets(
    memory: HindsightMemory, client: TestClient, seeded: Seeded
) -> None:
    """Delete asks first (GET changes nothing), then the post forgets for real."""
    ask = client.get(
        "/memory/delete", params={"namespace": "maya", "id": seeded.doomed}
    )
    assert "Delete forever" in ask.text
    assert memory.get("maya", seeded.doomed) is not None
    client.post(
        "/memory/delete",
        data={"csrf": csrf_of(client), "namespace": "maya", "id": seeded.doomed},
    )
    assert memory.get("maya", seeded.doomed) is None
    assert seeded.doomed not in [r.id for r in memory.list_memories("maya")]


def test_restore_confirm_reject_through_the_api(
    memory: HindsightMemory, client: TestClient, seeded: Seeded
) -> None:
    """The JSON API restores an archived memory and confirms or rejects a lesson."""
    headers = {"X-CSRF-Token": csrf_of(client)}

    def act(action: str, memory_id: str) -> dict[str, object]:
        resp = client.post(
            f"/api/memory/{action}",
            json={"namespace": "maya", "id": memory_id},
            headers=headers,
        )
        assert resp.status_code == 200, resp.text
        return dict(resp.json())

    act("restore", seeded.archived)
    restored = memory.get("maya", seeded.archived)
    assert restored is not None and restored.status is Status.ACTIVE
    act("confirm", seeded.lesson)
    found = memory.recall("travel family calendar", namespace="maya", timeout=None)
    assert seeded.lesson in found.ids
    act("reject", seeded.lesson)
    lesson = memory.get("maya", seeded.lesson)
    assert lesson is not None and lesson.status is Status.ARCHIVED


def test_actions_on_missing_memories_are_404(client: TestClient) -> None:
    """An action on an id the namespace does not hold is a 404, not a crash."""
    resp = client.post(
        "/api/memory/restore",
        json={"namespace": "maya", "id": "0" * 32},
        headers={"X-CSRF-Token": csrf_of(client)},
    )
    assert resp.status_code == 404


def test_memory_text_is_escaped(client: TestClient, seeded: Seeded) -> None:
    """Stored markup is rendered as text, never as tags, on every page."""
    for url, params in [
        ("/memories", {"namespace": "maya"}),
        ("/memory", {"namespace": "maya", "id": seeded.xss[1]}),
        ("/search", {"namespace": "maya", "q": "pwned script img svg"}),
    ]:
        html = client.get(url, params=params).text
        assert "<script>window" not in html and "<img src=x" not in html
        assert "<svg onload" not in html
    html = client.get("/memory", params={"namespace": "maya", "id": seeded.xss[0]}).text
    assert "&lt;script&gt;window.__pwned" in html


def test_pages_forbid_inline_script(client: TestClient) -> None:
    """Every response carries a Content-Security-Policy without inline script."""
    csp = client.get("/").headers["content-security-policy"]
    assert "default-src 'none'" in csp and "unsafe-inline" not in csp


def test_static_files_are_packaged() -> None:
    """The stylesheet and templates ship inside the package."""
    from importlib import resources

    root = resources.files("hindsight_lg.panel")
    assert (root / "static" / "panel.css").is_file()
    assert (root / "templates" / "memories.html").is_file()


def test_create_app_refuses_a_bad_namespace(memory: HindsightMemory) -> None:
    """A restricted panel needs a valid namespace."""
    import pytest

    with pytest.raises(ValueError):
        create_app(memory, namespace="  ")


def test_mounted_under_a_prefix(memory: HindsightMemory, seeded: Seeded) -> None:
    """Mounted in another app, links, styles and redirects stay under the mount."""
    from starlette.applications import Starlette
    from starlette.routing import Mount

    host = Starlette(routes=[Mount("/panel", app=create_app(memory))])
    with TestClient(host, base_url="http://127.0.0.1") as c:
        page = c.get("/panel/memories", params={"namespace": "maya"}).text
        assert 'href="/panel/memory?' in page
        assert c.get("/panel/static/panel.css").status_code == 200
        csrf = c.get("/panel/api/session").json()["csrf_token"]
        resp = c.post(
            "/panel/memory/restore",
            data={"csrf": csrf, "namespace": "maya", "id": seeded.archived},
            follow_redirects=False,
        )
        assert resp.headers["location"].startswith("/panel/memory?")


def test_namespaces_are_paged(memory: HindsightMemory, client: TestClient) -> None:
    """The namespace list pages, so its counts never read every tenant at once."""
    for i in range(60):
        memory.remember(f"note {i}", namespace=f"user-{i:02d}")
    first = client.get("/api/namespaces").json()
    assert first["total"] == 62 and len(first["namespaces"]) == 50
    rest = client.get("/api/namespaces", params={"start": 50}).json()["namespaces"]
    names = [n["namespace"] for n in first["namespaces"] + rest]
    assert len(set(names)) == 62
    assert "Next" in client.get("/").text


def test_rejected_then_restored_lesson_can_be_confirmed(
    client: TestClient, seeded: Seeded
) -> None:
    """A rejected lesson is archived; restored, it offers confirm again."""
    headers = {"X-CSRF-Token": csrf_of(client)}
    body = {"namespace": "maya", "id": seeded.lesson}
    client.post("/api/memory/reject", json=body, headers=headers)
    params = {"namespace": "maya", "id": seeded.lesson}
    page = client.get("/memory", params=params).text
    assert "Confirm lesson" not in page and "Restore to active" in page
    client.post("/api/memory/restore", json=body, headers=headers)
    assert "Confirm lesson" in client.get("/memory", params=params).text


def test_every_action_is_traced_and_audited(
    memory: HindsightMemory, client: TestClient, seeded: Seeded
) -> None:
    """Each panel action leaves an engine span and an audit entry on its memory."""
    from hindsight_lg.testing import capture_spans

    headers = {"X-CSRF-Token": csrf_of(client)}
    steps = [
        ("correct", seeded.wrong, "hindsight.correct", "corrected"),
        ("restore", seeded.archived, "hindsight.restore", "restore"),
        ("confirm", seeded.lesson, "hindsight.confirm_lesson", "confirm"),
        ("reject", seeded.lesson, "hindsight.reject_lesson", "reject"),
        ("delete", seeded.doomed, "hindsight.forget", "forget"),
    ]
    for action, memory_id, span, op in steps:
        with capture_spans() as spans:
            resp = client.post(
                f"/api/memory/{action}",
                json={"namespace": "maya", "id": memory_id, "text": "Lena: Lisbon"},
                headers=headers,
            )
        assert resp.status_code == 200, resp.text
        assert span in [s.name for s in spans]
        assert op in [a.op for a in memory.audit("maya", memory_id)]
    trail = memory.audit("maya", seeded.doomed)
    assert [a.op for a in trail] == ["forget"]
    assert "4411" not in str([a.detail for a in trail])


def test_tier_filter(memory: HindsightMemory, client: TestClient) -> None:
    """The tier filter keeps one tier, e.g. the procedural rules and lessons."""
    page = client.get("/memories", params={"namespace": "maya", "tier": "procedural"})
    shown = [memory.get("maya", i) for i in _ids_on(page.text)]
    assert shown and all(r is not None and r.tier.value == "procedural" for r in shown)
