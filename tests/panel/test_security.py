"""Who gets in: token, host check, CSRF, and the one-namespace end-user view."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory, Status
from hindsight_lg.panel import create_app
from tests.panel.conftest import Seeded, csrf_of

TOKEN = "s3cret-token-for-tests"


@pytest.fixture
def guarded(memory: HindsightMemory, seeded: Seeded) -> Iterator[TestClient]:
    """A token-protected panel reached through a public-looking host name."""
    app = create_app(memory, token=TOKEN)
    with TestClient(app, base_url="http://panel.example:8765") as c:
        yield c


@pytest.fixture
def maya_only(memory: HindsightMemory, seeded: Seeded) -> Iterator[TestClient]:
    """A panel restricted to the namespace ``maya``."""
    app = create_app(memory, namespace="maya")
    with TestClient(app, base_url="http://127.0.0.1:8765") as c:
        yield c


@pytest.mark.parametrize(
    "path", ["/", "/memories?namespace=maya", "/api/namespaces", "/static/panel.css"]
)
def test_token_is_required(guarded: TestClient, path: str) -> None:
    """Without the token every request, pages, API and static files, gets 401."""
    assert guarded.get(path).status_code == 401
    wrong = guarded.get(path, headers={"Authorization": "Bearer nope-nope"})
    assert wrong.status_code == 401


def test_bearer_token_lets_in(guarded: TestClient) -> None:
    """The bearer token opens the API, and it is enough for state changes too."""
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert guarded.get("/api/namespaces", headers=auth).status_code == 200


def test_token_link_sets_a_cookie(guarded: TestClient) -> None:
    """Opening ?token=... once sets an HttpOnly cookie and drops the token from the URL."""
    resp = guarded.get(
        f"/memories?namespace=maya&token={TOKEN}", follow_redirects=False
    )
    assert resp.status_code == 303
    assert resp.headers["location"] == "/memories?namespace=maya"
    cookie = resp.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert guarded.get("/memories?namespace=maya").status_code == 200
    assert guarded.get("/?token=wrong-token").status_code == 401


def test_foreign_host_needs_a_token(memory: HindsightMemory, seeded: Seeded) -> None:
    """Without a token only loopback host names are answered (no DNS rebinding)."""
    with TestClient(create_app(memory), base_url="http://evil.example") as c:
        assert c.get("/api/namespaces").status_code == 403
    with TestClient(create_app(memory), base_url="http://localhost:8765") as c:
        assert c.get("/api/namespaces").status_code == 200


@pytest.mark.parametrize("path", ["//evil.com/", "/\\evil.com/", "///evil.com"])
def test_the_token_link_never_redirects_to_another_host(
    guarded: TestClient, path: str
) -> None:
    """A login link whose path starts like another origin stays on this host."""
    resp = guarded.get(f"{path}?token={TOKEN}", follow_redirects=False)
    location = resp.headers.get("location", "")
    assert resp.status_code in (303, 404) and not location.startswith(("//", "/\\"))
    if resp.status_code == 303:  # a path on this host, whatever it names
        assert location.startswith("/") and location[1:2] not in ("/", "\\")


@pytest.mark.parametrize(
    "header",
    [
        {"X-Forwarded-For": "203.0.113.9"},
        {"Forwarded": "for=203.0.113.9"},
        {"X-Real-IP": "203.0.113.9"},
        {"Via": "1.1 proxy"},
    ],
)
def test_a_proxied_request_to_a_tokenless_panel_is_refused(
    client: TestClient, header: dict[str, str]
) -> None:
    """A proxy forwarding Host: 127.0.0.1 does not expose a token-less panel."""
    assert client.get("/api/namespaces").status_code == 200
    assert client.get("/api/namespaces", headers=header).status_code == 403


def test_a_remote_peer_naming_a_loopback_host_is_refused(
    memory: HindsightMemory, seeded: Seeded
) -> None:
    """Host: 127.0.0.1 from a non-loopback socket peer gets 403 without a token."""
    app = create_app(memory)
    with TestClient(
        app, base_url="http://127.0.0.1:8765", client=("203.0.113.9", 5000)
    ) as c:
        assert c.get("/api/namespaces").status_code == 403
    with TestClient(app, base_url="http://127.0.0.1:8765", client=("::1", 5000)) as c:
        assert c.get("/api/namespaces").status_code == 200


def test_form_posts_need_the_csrf_token(
    memory: HindsightMemory, client: TestClient, seeded: Seeded
) -> None:
    """A form post without the CSRF token, or with a wrong one, changes nothing."""
    for extra in ({}, {"csrf": "forged"}):
        resp = client.post(
            "/memory/delete", data={"namespace": "maya", "id": seeded.doomed, **extra}
        )
        assert resp.status_code == 403
    assert memory.get("maya", seeded.doomed) is not None


def test_cross_site_posts_are_refused(
    memory: HindsightMemory, client: TestClient, seeded: Seeded
) -> None:
    """A post whose Origin is another site is refused even with a valid token."""
    resp = client.post(
        "/memory/delete",
        data={"csrf": csrf_of(client), "namespace": "maya", "id": seeded.doomed},
        headers={"Origin": "http://evil.example"},
    )
    assert resp.status_code == 403
    assert memory.get("maya", seeded.doomed) is not None


def test_json_actions_need_the_csrf_header(
    memory: HindsightMemory, client: TestClient, seeded: Seeded
) -> None:
    """JSON actions need X-CSRF-Token, and a form-encoded post to the API is refused."""
    body = {"namespace": "maya", "id": seeded.doomed}
    assert client.post("/api/memory/delete", json=body).status_code == 403
    assert client.post("/api/memory/delete", data=body).status_code == 400
    assert memory.get("maya", seeded.doomed) is not None


def test_bearer_client_needs_no_csrf(
    memory: HindsightMemory, guarded: TestClient, seeded: Seeded
) -> None:
    """A script with the bearer token can act without the CSRF header."""
    resp = guarded.post(
        "/api/memory/restore",
        json={"namespace": "maya", "id": seeded.archived},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert resp.status_code == 200
    restored = memory.get("maya", seeded.archived)
    assert restored is not None and restored.status is Status.ACTIVE


@pytest.mark.parametrize(
    "path",
    [
        "/memories?namespace=bob",
        "/search?namespace=bob&q=pin",
        "/api/memories?namespace=bob",
        "/api/search?namespace=bob&q=pin",
        "/memories?namespace=maya&namespace=bob",
    ],
)
def test_restricted_panel_refuses_other_namespaces_in_urls(
    maya_only: TestClient, path: str
) -> None:
    """Another namespace in the query string is refused by the end-user view."""
    resp = maya_only.get(path)
    assert resp.status_code == 403
    assert "9999" not in resp.text


def test_restricted_panel_hides_other_memories_by_id(
    maya_only: TestClient, seeded: Seeded
) -> None:
    """Another tenant's memory id is not found, with or without a namespace named."""
    for params in ({"id": seeded.foreign}, {"namespace": "maya", "id": seeded.foreign}):
        assert maya_only.get("/memory", params=params).status_code == 404
        assert maya_only.get("/api/memory", params=params).status_code == 404
    assert (
        maya_only.get(
            "/api/memory", params={"namespace": "bob", "id": seeded.foreign}
        ).status_code
        == 403
    )


def test_restricted_panel_lists_and_opens_its_namespace(maya_only: TestClient) -> None:
    """The end-user view lists only its namespace and opens on it."""
    names = maya_only.get("/api/namespaces").json()["namespaces"]
    assert [n["namespace"] for n in names] == ["maya"]
    home = maya_only.get("/", follow_redirects=False)
    assert home.status_code == 303 and "namespace=maya" in home.headers["location"]
    page = maya_only.get("/memories").text
    assert "Namespaces" not in page and "bob" not in page


def test_restricted_panel_refuses_other_namespaces_in_forms(
    memory: HindsightMemory, maya_only: TestClient, seeded: Seeded
) -> None:
    """A form field or query string naming another namespace cannot change it."""
    csrf = csrf_of(maya_only)
    form = {"csrf": csrf, "namespace": "bob", "id": seeded.foreign}
    assert maya_only.post("/memory/delete", data=form).status_code == 403
    form["namespace"] = "maya"
    assert maya_only.post("/memory/delete?namespace=bob", data=form).status_code == 403
    assert maya_only.post("/memory/delete", data=form).status_code == 404
    assert memory.get("bob", seeded.foreign) is not None


def test_restricted_panel_refuses_other_namespaces_in_json(
    memory: HindsightMemory, maya_only: TestClient, seeded: Seeded
) -> None:
    """The JSON API cannot reach another namespace through its body either."""
    headers = {"X-CSRF-Token": csrf_of(maya_only)}
    for action in ("delete", "correct", "restore"):
        resp = maya_only.post(
            f"/api/memory/{action}",
            json={"namespace": "bob", "id": seeded.foreign, "text": "hacked"},
            headers=headers,
        )
        assert resp.status_code == 403
    resp = maya_only.post(
        "/api/memory/delete", json={"id": seeded.foreign}, headers=headers
    )
    assert resp.status_code == 404
    foreign = memory.get("bob", seeded.foreign)
    assert foreign is not None and foreign.content == "Bob's bank PIN is 9999"


def test_unrestricted_panel_needs_one_namespace(client: TestClient) -> None:
    """Without a restriction a request names exactly one namespace."""
    assert client.get("/memories").status_code == 400
    resp = client.get("/memories?namespace=maya&namespace=bob")
    assert resp.status_code == 400


def test_short_tokens_are_refused(memory: HindsightMemory) -> None:
    """A token too short to be a secret is a caller mistake."""
    with pytest.raises(ValueError, match="at least 8"):
        create_app(memory, token="abc")
