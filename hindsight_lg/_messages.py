"""Reading LangChain messages (or message dicts) without importing LangChain.

One module and one vocabulary for every layer: roles are LangChain's message
types, ``human``, ``ai``, ``system`` and ``tool``; the OpenAI-style ``user``
and ``assistant`` of message dicts are read as ``human`` and ``ai``.

Content can be anything LangChain allows (a string, a list of content blocks,
blocks with ``None`` fields, nested lists): :func:`text_of` walks it without
recursion, so hostile nesting cannot raise ``RecursionError``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

HUMAN, AI = "human", "ai"
_ALIASES = {"user": HUMAN, "assistant": AI}
_MAX_PARTS = 10_000  # blocks read from one message's content; the rest is ignored


def lookup(message: Any, key: str) -> Any:
    """A field of a message object or dict (``None`` when absent)."""
    if message is None:
        return None
    if isinstance(message, Mapping):
        return message.get(key)
    return getattr(message, key, None)


def role(message: Any) -> str:
    """``human``, ``ai``, ``system`` or ``tool`` for a message or message dict."""
    value = getattr(message, "type", None)
    if value is None and isinstance(message, Mapping):
        value = message.get("type") or message.get("role")
    return _ALIASES.get(str(value), str(value or HUMAN))


def text_of(message: Any) -> str:
    """Plain text of a message's content: text blocks joined, the rest skipped.

    Raises:
        ValueError: the content is bytes (decode it to text first).
    """
    content = lookup(message, "content")
    if isinstance(content, bytes):
        raise ValueError("message content is bytes: decode it to text first")
    return " ".join(_texts(content))


def _texts(content: Any) -> list[str]:
    """Text parts of content, depth first, without recursion."""
    out: list[str] = []
    stack = [content]
    while stack and len(out) < _MAX_PARTS:
        item = stack.pop()
        if isinstance(item, str):
            if item:
                out.append(item)
        elif isinstance(item, Mapping):
            text = item.get("text")
            if isinstance(text, str) and text:
                out.append(text)
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
    return out


_PAIR_ROLES = frozenset({"user", "human", "assistant", "ai", "system", "tool"})


def as_message(message: Any) -> Any:
    """LangChain's ``("user", "text")`` pair as a message dict; anything else as is.

    A pair is a message, never a text: its ``repr`` would otherwise become a
    memory.
    """
    if (
        isinstance(message, tuple)
        and len(message) == 2
        and all(isinstance(x, str) for x in message)
        and message[0] in _PAIR_ROLES
    ):
        return {"role": message[0], "content": message[1]}
    return message


def plain_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Human and AI messages as JSON-ready dicts ``{role, content, id, name}``.

    System and tool messages are dropped: capture only keeps what people said.
    An AI message right after a tool result is marked ``after_tool``: it
    reports the tool, which capture keeps when the caller passed it on.
    """
    out: list[dict[str, Any]] = []
    after_tool = False
    for msg in map(as_message, messages):
        kind = role(msg)
        reports = after_tool or bool(lookup(msg, "after_tool"))
        after_tool = kind == "tool"
        if kind not in (HUMAN, AI):
            continue
        item: dict[str, Any] = {"role": kind, "content": text_of(msg)}
        if kind == AI and reports:
            item["after_tool"] = True
        for key in ("id", "name"):
            if value := lookup(msg, key):
                item[key] = str(value)
        out.append(item)
    return out


def message_key(message: Mapping[str, Any]) -> str:
    """The identity of a plain message: its id, or a digest of role and content."""
    if message.get("id"):
        return str(message["id"])
    digest = hashlib.sha1(f"{role(message)}\0{message['content']}".encode())
    return "sha1:" + digest.hexdigest()


def capturable(messages: Sequence[Any], *, tools: bool = False) -> list[Any]:
    """The turn's messages worth capturing as memories.

    Tool results are never captured on their own (the writer skips tool
    messages). An assistant message answering a tool result mostly restates
    it ("Sunny in Paris"), so by default it is left out as well; ``tools=True``
    keeps it.
    """
    if tools:
        return list(messages)
    kept, after_tool = [], False
    for message in messages:
        kind = role(message)
        if kind == AI and after_tool:
            continue
        after_tool = kind == "tool" or (after_tool and kind != HUMAN)
        kept.append(message)
    return kept
