"""``panel``: serve the memory panel (see ``docs/panel.md``) with uvicorn."""

from __future__ import annotations

import argparse
import gc
import os
import sys
import threading
from typing import Any
from urllib.parse import quote

from hindsight_lg._commands import add_store_args, namespace_arg, open_memory

TOKEN_ENV = "HINDSIGHT_PANEL_TOKEN"
_LOOPBACK = ("127.0.0.1", "localhost", "::1")
# The model loads once the first page has gone out, or this long after the
# start if nobody asks for one: loading it holds the CPU (and the GIL) for
# seconds, and the first page should not wait behind it.
WARM_AFTER_S = 10.0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the panel command."""
    p = sub.add_parser(
        "panel", help="see, correct and delete memories in a browser (local web app)"
    )
    add_store_args(p, namespace=False)
    p.add_argument(
        "--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)"
    )
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument(
        "--namespace",
        "-n",
        default=None,
        type=namespace_arg,
        help="show this namespace only (an end user's view), enforced by the server",
    )
    p.add_argument(
        "--agent",
        default=None,
        help="an agent's view: what is private to other agents is never shown or "
        "changed, enforced by the server",
    )
    p.add_argument(
        "--token-file",
        default=None,
        help=f"require the token kept in this file (first line); or set {TOKEN_ENV}. "
        "Needed for any host but 127.0.0.1",
    )
    p.add_argument(
        "--token",
        default=None,
        help="the token itself: other users see it in `ps`; prefer --token-file "
        f"or {TOKEN_ENV}",
    )
    p.set_defaults(func=cmd_panel)


class FirstPage:
    """The panel's ASGI app, noting when its first HTTP answer has gone out."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.served = threading.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)
        if scope["type"] == "http":
            self.served.set()


def _warm(memory: Any, go: threading.Event, stopping: threading.Event) -> None:
    """Once ``go`` is set (or after ``WARM_AFTER_S``), load the model and freeze.

    Loads the model and the search path, then freezes what is alive: a
    long-lived server keeps full garbage collections off the model's and the
    store's half a million objects (docs/recall.md, "Timeouts"). A server
    stopped before its first page loads nothing.
    """
    go.wait(WARM_AFTER_S)
    if stopping.is_set():
        return
    try:
        memory.warm_up()
    except Exception as exc:  # the first search will say what is wrong
        print(f"memory panel: warm-up failed: {exc}", file=sys.stderr)
    gc.collect()
    gc.freeze()


def read_token(args: argparse.Namespace) -> str | None:
    """The panel's token: ``--token-file``, then the environment, then ``--token``.

    A token on the command line is readable by every user of the machine
    (``ps``, ``/proc/<pid>/cmdline``): it still works, with a warning.
    """
    if args.token_file:
        with open(args.token_file, encoding="utf-8") as fh:
            return fh.readline().strip() or None
    if os.environ.get(TOKEN_ENV):
        return os.environ[TOKEN_ENV]
    if args.token:
        print(
            "warning: --token is visible to other users in `ps`; use --token-file "
            f"or {TOKEN_ENV}",
            file=sys.stderr,
        )
    return args.token or None


def cmd_panel(args: argparse.Namespace) -> int:
    """Serve the panel until interrupted."""
    try:
        import uvicorn

        from hindsight_lg.panel import create_app
    except ImportError:
        print("the panel needs: pip install 'hindsight-lg[panel]'", file=sys.stderr)
        return 2
    try:
        token = read_token(args)
    except OSError as exc:
        print(f"error: cannot read the token file: {exc}", file=sys.stderr)
        return 2
    if args.host not in _LOOPBACK and token is None:
        print(
            f"error: serving {args.host} needs a token: pass --token-file or set "
            f"{TOKEN_ENV}",
            file=sys.stderr,
        )
        return 2
    # The pages list and correct memories without the model: serve them at
    # once and load the model behind the first one, for the first search.
    memory = open_memory(args, warm=False)
    warming: threading.Thread | None = None
    stopping = threading.Event()
    app: FirstPage | None = None
    try:
        app = FirstPage(
            create_app(
                memory, namespace=args.namespace, token=token, agent_id=args.agent
            )
        )
        gc.collect()
        gc.freeze()  # what is alive now; _warm freezes the model once it is in
        warming = threading.Thread(
            target=_warm, args=(memory, app.served, stopping), daemon=True
        )
        warming.start()
        where = "[::1]" if args.host == "::1" else args.host
        # The link to open, token included (as Jupyter prints it): the token
        # is the user's own, and the first visit trades it for a cookie.
        suffix = f"/?token={quote(token, safe='')}" if token else "/"
        print(f"memory panel on http://{where}:{args.port}{suffix}", file=sys.stderr)
        # No WebSocket route: ws="none" spares importing a WebSocket stack.
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning", ws="none")
    finally:
        if app is not None:
            if not app.served.is_set():
                stopping.set()  # stopped before its first page: load nothing
            app.served.set()
        # A warm-up still loading must not meet a closed store.
        if warming is not None:
            warming.join(timeout=120)
        memory.close()
    return 0
