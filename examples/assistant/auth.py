"""Custom auth for the assistant: a bearer token names the user; users stay apart.

Serve with ``langgraph dev --config langgraph.auth.json``. Demo tokens come
from ``HINDSIGHT_DEMO_TOKENS`` (``"token:user,token:user"``); in production
:func:`authenticate` verifies a token from your identity provider instead (a
JWT's ``sub`` is the usual identity).

The server puts the authenticated user into every run's config
(``langgraph_auth_user`` / ``langgraph_auth_user_id``), and hindsight-lg's
identity rule takes it before any ``user_id`` the client sends, so a run
reads and writes only its caller's memory. The handlers below extend that to
the server's own resources: a user sees only their threads, and the HTTP
store API reaches only ``("memories", <their id>)``, the store layout of the
same memories the graph recalls.
"""

from __future__ import annotations

import os
from typing import Any

from langgraph_sdk import Auth

auth = Auth()
MEMORIES = "memories"


def _tokens() -> dict[str, str]:
    raw = os.environ.get("HINDSIGHT_DEMO_TOKENS", "")
    pairs = (item.split(":", 1) for item in raw.split(",") if ":" in item)
    return {token.strip(): user.strip() for token, user in pairs}


@auth.authenticate
async def authenticate(authorization: str | None) -> Auth.types.MinimalUserDict:
    """The user a bearer token names; 401 for a missing or unknown token."""
    scheme, _, token = (authorization or "").partition(" ")
    user = _tokens().get(token) if scheme.lower() == "bearer" else None
    if not user:
        raise Auth.exceptions.HTTPException(
            status_code=401, detail="send Authorization: Bearer <token>"
        )
    return {"identity": user}


@auth.on.threads
async def own_threads(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str]:
    """New threads (and runs) are stamped with their owner; reads see only one's own."""
    if isinstance(value, dict):
        # In place: the server reads the very dict it handed over.
        metadata = value.setdefault("metadata", {})
        if metadata is None:
            metadata = value["metadata"] = {}
        metadata["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}


@auth.on.store()
async def own_memories(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Store calls reach only ``("memories", <user>)``; a wider search is narrowed."""
    mine = (MEMORIES, ctx.user.identity)
    namespace = tuple(value.get("namespace") or ())
    if namespace in ((), (MEMORIES,)):
        value["namespace"] = mine
    elif namespace[:2] != mine:
        raise Auth.exceptions.HTTPException(
            status_code=403, detail=f"only namespace {list(mine)} is yours"
        )
