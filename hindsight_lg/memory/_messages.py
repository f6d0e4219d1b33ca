"""Reading LangChain messages (or message dicts) without depending on their classes.

Shared by reflection, the nodes, the middleware and the checkpointer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

EPHEMERAL_PREFIX = "hindsight-memories-"


def _lookup(source: Any, key: str) -> Any:
    if source is None:
        return None
    if isinstance(source, Mapping):
        return source.get(key)
    return getattr(source, key, None)


def role(message: Any) -> str:
    """``human``, ``ai``, ``system`` or ``tool`` for a message or message dict."""
    value = getattr(message, "type", None)
    if value is None and isinstance(message, Mapping):
        value = message.get("type") or message.get("role")
    return {"user": "human", "assistant": "ai"}.get(str(value), str(value))


def text_of(message: Any) -> str:
    """Plain text of a message's content (text blocks joined)."""
    content = _lookup(message, "content") or ""
    if isinstance(content, list):
        parts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in content]
        return " ".join(p for p in parts if p)
    return str(content)


def is_final_answer(message: Any) -> bool:
    """An assistant message without tool calls: the run ends with it."""
    return role(message) == "ai" and not (_lookup(message, "tool_calls") or [])


def is_ephemeral(message: Any) -> bool:
    """The memory block the recall node put into the thread for this turn."""
    return str(_lookup(message, "id") or "").startswith(EPHEMERAL_PREFIX)


def current_turn(messages: Sequence[Any]) -> list[Any]:
    """The messages of the latest run: everything after the previous final answer."""
    end = len(messages)
    if end and is_final_answer(messages[-1]):
        end -= 1
    start = 0
    for i in range(end - 1, -1, -1):
        if is_final_answer(messages[i]):
            start = i + 1
            break
    return [m for m in messages[start:] if not is_ephemeral(m)]


def latest_user_text(messages: Sequence[Any]) -> str:
    """The text of the last human message ("" when there is none)."""
    for message in reversed(messages):
        if role(message) == "human":
            return text_of(message)
    return ""
