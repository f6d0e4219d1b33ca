"""The panel's ASGI app: pages, JSON API and actions over one ``HindsightMemory``.

Starlette, not FastAPI: the panel needs routing, forms, templates, static
files and a test client, which Starlette has, and none of FastAPI's request
models or generated schema; one small dependency is easier to mount in any
ASGI server. Handlers are ``async`` and run the engine's synchronous calls in
a worker thread, so a slow store never blocks the event loop.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

import jinja2
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from hindsight_lg.errors import ConflictError, ModelNotAvailable
from hindsight_lg.memory import HindsightMemory, strength
from hindsight_lg.panel import _views as views
from hindsight_lg.panel._actions import ACTIONS, rollback_thread, run_action
from hindsight_lg.panel._security import Forbidden, Guard, GuardMiddleware, denied

Handler = Callable[[Request], Awaitable[Response]]


def _templates() -> Jinja2Templates:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("hindsight_lg.panel", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(
        when=views.when, kinds=views.KINDS, statuses=views.STATUSES, tiers=views.TIERS
    )
    env.filters["qs"] = lambda params: urlencode(params)
    return Jinja2Templates(env=env)


def _errors(handler: Handler) -> Handler:
    """Turn the engine's and the guard's exceptions into HTTP answers."""

    async def wrapped(request: Request) -> Response:
        try:
            return await handler(request)
        except Forbidden as exc:
            return denied(request, 403, str(exc))
        except KeyError as exc:
            return denied(request, 404, str(exc.args[0]) if exc.args else "not found")
        except ConflictError as exc:
            return denied(request, 409, str(exc))
        except ModelNotAvailable as exc:
            # The store's model is not on this machine: its pages still work,
            # a search says which model to provide.
            return denied(request, 503, str(exc))
        except ValueError as exc:
            return denied(request, 400, str(exc))

    return wrapped


def _root(request: Request) -> str:
    # Where the app is mounted ("" at the server's root), for links and redirects.
    return str(request.scope.get("root_path", "")).rstrip("/")


def _redirect(request: Request, target: str) -> Response:
    """A 303 "see other" to ``target``, a path inside the panel."""
    return RedirectResponse(_root(request) + target, 303)


class Panel:
    """The panel's handlers, bound to one memory and one guard."""

    def __init__(self, memory: HindsightMemory, guard: Guard) -> None:
        self.engine = memory
        self.guard = guard
        self.templates = _templates()

    def _namespace(self, request: Request, *body: Any) -> str:
        return self.guard.resolve([*request.query_params.getlist("namespace"), *body])

    def _page(self, request: Request, name: str, **context: Any) -> Response:
        now = self.engine.clock()
        context.update(
            root=_root(request),
            strength=lambda record: strength(record, now),
            csrf=self.guard.csrf,
            restricted=self.guard.namespace,
            flash=request.query_params.get("done", ""),
        )
        return self.templates.TemplateResponse(request, name, context)

    # -- pages -------------------------------------------------------------

    async def home(self, request: Request) -> Response:
        if self.guard.namespace is not None:
            target = "/memories?" + urlencode({"namespace": self.guard.namespace})
            return _redirect(request, target)
        start = max(0, int(request.query_params.get("start") or 0))
        rows, total = await run_in_threadpool(
            functools.partial(
                views.namespaces, self.engine, start=start, reader=self.guard.agent
            )
        )
        return self._page(
            request,
            "namespaces.html",
            ns=None,
            rows=rows,
            total=total,
            start=start,
            size=views.NAMESPACES_PER_PAGE,
        )

    def _filters(self, request: Request) -> views.Filters:
        """The list filters, read as the panel's agent when it has one."""
        filters = views.Filters.parse(request.query_params)
        return replace(filters, agent=self.guard.reader(filters.agent) or "")

    async def memories(self, request: Request) -> Response:
        ns = self._namespace(request)
        filters = self._filters(request)
        before = views.parse_cursor(request.query_params.get("before"))
        view = await run_in_threadpool(
            views.namespace_view, self.engine, ns, filters, before=before
        )
        return self._page(request, "memories.html", view=view, ns=ns)

    async def _view(self, request: Request, ns: str) -> views.MemoryView:
        memory_id = request.query_params.get("id", "")
        return await run_in_threadpool(
            views.memory_view, self.engine, ns, memory_id, self.guard.agent
        )

    async def memory_page(self, request: Request) -> Response:
        ns = self._namespace(request)
        view = await self._view(request, ns)
        return self._page(request, "memory.html", view=view, ns=ns)

    async def confirm_delete(self, request: Request) -> Response:
        ns = self._namespace(request)
        view = await self._view(request, ns)
        return self._page(request, "delete.html", view=view, ns=ns)

    async def search(self, request: Request) -> Response:
        ns = self._namespace(request)
        query = request.query_params.get("q", "").strip()
        result = await self._recall(ns, query) if query else None
        cut = list(result.cut) if result is not None else []
        found = await run_in_threadpool(self.engine.get_many, ns, cut) if cut else []
        return self._page(
            request,
            "search.html",
            ns=ns,
            q=query,
            result=result,
            cut_records={r.id: r for r in found},
        )

    async def _recall(self, ns: str, query: str) -> Any:
        return await self.engine.arecall(
            query,
            namespace=ns,
            agent_id=self.guard.agent,
            k=20,
            explain=True,
            timeout=None,
        )

    async def act(self, request: Request) -> Response:
        """A form post from a page: run the action, then show where it led."""
        action = request.path_params["action"]
        form = await request.form()
        if not self.guard.csrf_ok(request, str(form.get("csrf") or "")):
            return denied(request, 403, "missing or wrong CSRF token: reload the page")
        ns = self._namespace(request, *form.getlist("namespace"))
        memory_id = str(form.get("id") or "")
        outcome = await run_in_threadpool(
            run_action,
            self.engine,
            action,
            ns,
            memory_id,
            str(form.get("text") or ""),
            self.guard.agent,
        )
        if action == "delete":
            target = {"namespace": ns, "done": "deleted"}
            return _redirect(request, "/memories?" + urlencode(target))
        shown = outcome.get("memory", {}).get("id", memory_id)
        target = {"namespace": ns, "id": shown, "done": ACTIONS[action]}
        return _redirect(request, "/memory?" + urlencode(target))

    async def thread_rollback(self, request: Request) -> Response:
        """A form post: roll back what one thread wrote, then list the thread."""
        form = await request.form()
        if not self.guard.csrf_ok(request, str(form.get("csrf") or "")):
            return denied(request, 403, "missing or wrong CSRF token: reload the page")
        ns = self._namespace(request, *form.getlist("namespace"))
        thread = str(form.get("thread") or "")
        await run_in_threadpool(
            rollback_thread, self.engine, ns, thread, self.guard.agent
        )
        target = {
            "namespace": ns,
            "thread": thread,
            "status": "all",
            "done": "rolled back",
        }
        return _redirect(request, "/memories?" + urlencode(target))

    # -- JSON API ----------------------------------------------------------

    async def api_session(self, request: Request) -> Response:
        return JSONResponse(
            {"csrf_token": self.guard.csrf, "namespace": self.guard.namespace}
        )

    async def api_namespaces(self, request: Request) -> Response:
        start = max(0, int(request.query_params.get("start") or 0))
        rows, total = await run_in_threadpool(
            functools.partial(
                views.namespaces,
                self.engine,
                self.guard.namespace,
                start=start,
                reader=self.guard.agent,
            )
        )
        return JSONResponse({"namespaces": rows, "total": total, "start": start})

    async def api_memories(self, request: Request) -> Response:
        ns = self._namespace(request)
        filters = self._filters(request)
        before = views.parse_cursor(request.query_params.get("before"))
        size = int(request.query_params.get("limit") or views.PAGE_SIZE)
        page = await run_in_threadpool(
            views.page, self.engine, ns, filters.where(), size=size, before=before
        )
        return JSONResponse(
            {
                "namespace": ns,
                "memories": [views.record_json(r) for r in page.memories],
                "next": page.next_cursor,
            }
        )

    async def api_memory(self, request: Request) -> Response:
        ns = self._namespace(request)
        view = await self._view(request, ns)
        return JSONResponse(
            {
                "memory": views.record_json(view.record),
                "edges": [link.edge.to_dict() for link in view.links],
                "audit": [a.to_dict() for a in view.audit],
            }
        )

    async def api_search(self, request: Request) -> Response:
        ns = self._namespace(request)
        query = request.query_params.get("q", "").strip()
        if not query:
            raise ValueError("give a query: ?q=...")
        result = await self._recall(ns, query)
        explanation = result.explanation or {}
        return JSONResponse(
            {
                "query": query,
                "memories": [
                    {
                        "memory": views.record_json(m.record),
                        "score": m.score,
                        "paths": explanation.get(m.id, m.paths),
                        "breakdown": m.breakdown.to_json() if m.breakdown else None,
                    }
                    for m in result.memories
                ],
                "cut": result.cut,
            }
        )

    async def _json_body(self, request: Request) -> dict[str, Any] | Response:
        """An action's JSON object, or the refusal to send back."""
        if "application/json" not in request.headers.get("content-type", ""):
            raise ValueError("send the action as JSON (Content-Type: application/json)")
        if not self.guard.csrf_ok(request, None):
            return denied(
                request,
                403,
                "send X-CSRF-Token (from GET /api/session) or a bearer token",
            )
        body = await request.json()
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        return body

    async def api_thread_rollback(self, request: Request) -> Response:
        """Roll back what one thread wrote: ``{"namespace", "thread"}``."""
        body = await self._json_body(request)
        if isinstance(body, Response):
            return body
        ns = self._namespace(request, body.get("namespace"))
        thread = str(body.get("thread") or "")
        outcome = await run_in_threadpool(
            rollback_thread, self.engine, ns, thread, self.guard.agent
        )
        return JSONResponse(outcome)

    async def api_act(self, request: Request) -> Response:
        action = request.path_params["action"]
        body = await self._json_body(request)
        if isinstance(body, Response):
            return body
        ns = self._namespace(request, body.get("namespace"))
        outcome = await run_in_threadpool(
            run_action,
            self.engine,
            action,
            ns,
            str(body.get("id") or ""),
            str(body.get("text") or ""),
            self.guard.agent,
        )
        return JSONResponse(outcome)

    def routes(self) -> list[Any]:
        """Every route of the panel."""
        pages = [
            Route("/", self.home),
            Route("/memories", self.memories),
            Route("/memory", self.memory_page),
            Route("/memory/delete", self.confirm_delete, methods=["GET"]),
            Route("/search", self.search),
            Route("/memory/{action:str}", self.act, methods=["POST"]),
            Route("/thread/rollback", self.thread_rollback, methods=["POST"]),
            Route("/api/session", self.api_session),
            Route("/api/namespaces", self.api_namespaces),
            Route("/api/memories", self.api_memories),
            Route("/api/memory", self.api_memory),
            Route("/api/search", self.api_search),
            Route("/api/memory/{action:str}", self.api_act, methods=["POST"]),
            Route("/api/thread/rollback", self.api_thread_rollback, methods=["POST"]),
        ]
        routes: list[Any] = [
            Route(r.path, _errors(r.endpoint), methods=r.methods) for r in pages
        ]
        static = StaticFiles(packages=[("hindsight_lg.panel", "static")])
        return [*routes, Mount("/static", static, name="static")]


def create_app(
    memory: HindsightMemory,
    *,
    namespace: str | None = None,
    token: str | None = None,
    allowed_hosts: Iterable[str] | None = None,
    agent_id: str | None = None,
) -> Starlette:
    """The memory panel as an ASGI app, to serve or mount in your own server.

    Args:
        memory: the memory to show and change.
        namespace: show this namespace only (an end user's view), enforced on
            every request.
        token: require this secret (bearer header or cookie) on every request;
            needed to serve any host but loopback.
        allowed_hosts: host names answered without a token (default
            ``127.0.0.1``, ``localhost`` and ``::1``).
        agent_id: an agent's view, enforced on every request: what is private
            to another agent is never listed, counted, searched, linked or
            changed (its id is a 404), and the ``agent`` filter cannot name
            another agent (403).

    Returns:
        A Starlette application.

    Example:
        >>> from hindsight_lg import HindsightMemory
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> app = create_app(HindsightMemory(InMemoryBackend(), HashingEmbedder()))
    """
    if namespace is not None:
        from hindsight_lg.backends import check_namespace

        check_namespace(namespace)
    guard = Guard(token, namespace, allowed_hosts, agent_id)
    panel = Panel(memory, guard)
    app = Starlette(routes=panel.routes())
    app.add_middleware(GuardMiddleware, guard=guard)
    app.state.panel = panel
    return app
