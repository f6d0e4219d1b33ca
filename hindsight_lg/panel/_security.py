"""Who may use the panel: token, host check, CSRF, one-namespace views.

The rules, in the order the middleware applies them:

1. **Host.** Without a token the panel answers only requests addressed to a
   loopback name (``127.0.0.1``, ``localhost``, ``[::1]``): a web page that
   points its own domain at 127.0.0.1 (DNS rebinding) gets 403. A request
   that came through a proxy (``Forwarded``, ``X-Forwarded-*``, ``X-Real-IP``
   or ``Via``) or from a peer that is not loopback gets 403 too, whatever
   Host it names: a proxy forwarding ``Host: 127.0.0.1`` would otherwise
   expose a token-less panel to the proxy's clients.
2. **Token.** With a token, every request carries it as
   ``Authorization: Bearer <token>`` or in the panel's cookie; anything else
   gets 401. Opening ``/?token=<token>`` once sets the cookie (HttpOnly,
   SameSite=Strict) and redirects to the same path without the token (a
   path of several leading slashes or backslashes, which a browser reads as
   another host, redirects to ``/``-rooted path on this host).
3. **CSRF.** A state-changing request (any method but GET, HEAD, OPTIONS)
   whose ``Origin`` is another site gets 403. Then a form post must carry the
   panel's CSRF token in its ``csrf`` field, and a JSON post must carry it in
   the ``X-CSRF-Token`` header, unless it authenticated with the bearer token
   (a header no other site can make a browser send). Another site can neither
   read the CSRF token (same-origin policy) nor send the header.
4. **Namespace.** With ``namespace=...`` (an end user's view) every
   ``namespace`` a request names, in its query string or its body, must be
   that one (403 otherwise); lookups by id are made in that namespace only.
5. **Agent.** With ``agent_id=...`` (an agent's view) every read and action
   is made as that agent: another agent's private memories are not listed,
   counted, searched or linked, and their ids are 404 for pages and actions;
   a request naming another ``agent`` gets 403.

Every response carries a strict Content-Security-Policy (no inline script at
all) on top of escaped rendering, so stored memory text cannot run.
"""

from __future__ import annotations

import hmac
import ipaddress
import secrets
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import URL
from starlette.requests import Request
from starlette.responses import (
    JSONResponse,
    PlainTextResponse,
    RedirectResponse,
    Response,
)
from starlette.types import ASGIApp, Receive, Scope, Send

COOKIE = "hindsight_panel"
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})
# Headers a proxy adds: a request carrying one did not come from this machine.
PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip", "via")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; "
        "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


class Forbidden(Exception):
    """A request for something the panel's rules do not allow (403)."""


def same(a: str, b: str) -> bool:
    """Constant-time string comparison."""
    return hmac.compare_digest(a.encode(), b.encode())


class Guard:
    """The panel's access rules (see the module docstring).

    Args:
        token: the shared secret; ``None`` serves loopback requests only.
        namespace: the only namespace this panel shows, or ``None`` for all.
        allowed_hosts: host names to answer without a token (default: loopback).
        agent: the agent every request reads and acts as, or ``None``.
    """

    def __init__(
        self,
        token: str | None,
        namespace: str | None,
        allowed_hosts: Iterable[str] | None = None,
        agent: str | None = None,
    ) -> None:
        if token is not None and len(token) < 8:
            raise ValueError(
                "token must be at least 8 characters; try secrets.token_urlsafe()"
            )
        self.token = token
        self.namespace = namespace
        self.agent = agent or None
        self.allowed_hosts = frozenset(allowed_hosts or LOOPBACK)
        self.csrf = secrets.token_urlsafe(32)

    def host_allowed(self, request: Request) -> bool:
        """Whether the request's Host is one the panel answers without a token."""
        if self.token is not None:
            return True
        if any(h in request.headers for h in PROXY_HEADERS):
            return False  # proxied: the Host header says nothing about the client
        client = request.client
        if client is not None and not _loopback_peer(client.host):
            return False
        host = request.headers.get("host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return name.lower() in self.allowed_hosts

    def bearer(self, request: Request) -> bool:
        """Whether the request authenticated with ``Authorization: Bearer``."""
        header = request.headers.get("authorization", "")
        scheme, _, value = header.partition(" ")
        return (
            self.token is not None
            and scheme.lower() == "bearer"
            and same(value.strip(), self.token)
        )

    def authenticated(self, request: Request) -> bool:
        """Whether the request carries the token (always true without one)."""
        if self.token is None:
            return True
        cookie = request.cookies.get(COOKIE, "")
        return self.bearer(request) or (bool(cookie) and same(cookie, self.token))

    def cross_site(self, request: Request) -> bool:
        """Whether a state-changing request comes from another site's page."""
        origin = request.headers.get("origin")
        if not origin or origin == "null":
            return origin == "null"
        return (
            urlsplit(origin).netloc.lower() != request.headers.get("host", "").lower()
        )

    def csrf_ok(self, request: Request, form_value: str | None) -> bool:
        """Whether a state-changing request proves it came from the panel."""
        if self.bearer(request):
            return True
        given = request.headers.get("x-csrf-token") or form_value or ""
        return bool(given) and same(given, self.csrf)

    def resolve(self, values: Iterable[Any]) -> str:
        """The namespace a request is about, from every value it named.

        Raises:
            Forbidden: a restricted panel was asked about another namespace.
            ValueError: no namespace named, or two different ones.
        """
        named = {str(v) for v in values if v not in (None, "")}
        if self.namespace is not None:
            if named - {self.namespace}:
                raise Forbidden("this panel shows one namespace only")
            return self.namespace
        if len(named) != 1:
            raise ValueError(
                "name exactly one namespace (the `namespace` query parameter)"
                if not named
                else "the request names two different namespaces"
            )
        return named.pop()

    def reader(self, named: str) -> str | None:
        """The agent a request reads as: the panel's own, else the one it named.

        Raises:
            Forbidden: an agent's panel was asked to read as another agent.
        """
        if self.agent is None:
            return named or None
        if named not in ("", self.agent):
            raise Forbidden("this panel shows one agent's memories only")
        return self.agent


def _wants_json(request: Request) -> bool:
    return request.url.path.startswith("/api/") or "application/json" in (
        request.headers.get("accept", "")
    )


def denied(request: Request, status: int, message: str) -> Response:
    """An error response in the form the client asked for."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if _wants_json(request):
        return JSONResponse({"error": message}, status, headers=headers)
    return PlainTextResponse(message, status, headers=headers)


class GuardMiddleware:
    """ASGI middleware applying host, token and Origin rules, and the headers.

    Form fields (CSRF token, namespace) are checked by the handlers, which
    read the body; this layer never consumes it.
    """

    def __init__(self, app: ASGIApp, guard: Guard) -> None:
        self.app = app
        self.guard = guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        response = self._check(request)
        if response is not None:
            await _with_headers(response)(scope, receive, send)
            return

        async def send_with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                raw = list(message.get("headers", []))
                raw += [(k.lower().encode(), v.encode()) for k, v in HEADERS.items()]
                message = {**message, "headers": raw}
            await send(message)

        await self.app(scope, receive, send_with_headers)

    def _check(self, request: Request) -> Response | None:
        g = self.guard
        if not g.host_allowed(request):
            return denied(request, 403, "this host name is not served without a token")
        if g.token is not None and "token" in request.query_params:
            return self._login(request)
        if not g.authenticated(request):
            return denied(request, 401, "a token is required: open /?token=<token>")
        if request.method not in SAFE_METHODS and g.cross_site(request):
            return denied(request, 403, "cross-site requests are refused")
        return None

    def _login(self, request: Request) -> Response:
        given = request.query_params.get("token", "")
        assert self.guard.token is not None
        if not same(given, self.guard.token):
            return denied(request, 401, "wrong token")
        rest = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
        target = URL(path=local_path(request.url.path), query=urlencode(rest))
        response = RedirectResponse(str(target), 303)
        response.set_cookie(
            COOKIE,
            given,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response


def local_path(path: str) -> str:
    """``path`` as a path on this host: ``//evil.com/`` would be another host.

    Browsers read a leading ``//`` (and ``/\\``, ``\\\\``) as the start of
    another origin, so every leading slash and backslash becomes one ``/``.
    """
    return "/" + path.lstrip("/\\")


def _loopback_peer(host: str) -> bool:
    # An address, not a name: what the socket saw. "testclient" is
    # Starlette's test transport, which has no socket.
    if host in ("testclient", "localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _with_headers(response: Response) -> Response:
    for key, value in HEADERS.items():
        response.headers[key] = value
    return response
