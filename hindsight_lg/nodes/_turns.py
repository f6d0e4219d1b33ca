"""What the nodes read from a thread: the current turn, its final answer.

Message fields are read through :mod:`hindsight_lg._messages`; this module
only knows how a LangGraph thread is laid out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from hindsight_lg._messages import AI, HUMAN, capturable, lookup, role, text_of

EPHEMERAL_PREFIX = "hindsight-memories-"

#: Where a memory block goes: just after or just before the latest user message.
Position = Literal["after", "before"]


def is_final_answer(message: Any) -> bool:
    """An assistant message without tool calls: the run ends with it."""
    return role(message) == AI and not (lookup(message, "tool_calls") or [])


def is_ephemeral(message: Any) -> bool:
    """The memory block the recall node put into the thread for this turn."""
    return str(lookup(message, "id") or "").startswith(EPHEMERAL_PREFIX)


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


def reflection_turn(messages: Sequence[Any]) -> list[Any]:
    """The current turn with the one before it: what reflection judges.

    A user corrects an answer in the *next* turn ("that's wrong, ..."), so the
    previous exchange must be in view for the correction to count as evidence.
    """
    kept = [m for m in messages if not is_ephemeral(m)]
    current = current_turn(kept)
    earlier = kept[: len(kept) - len(current)]  # ends with the previous answer
    return [*current_turn(earlier), *current]


def latest_user_text(messages: Sequence[Any]) -> str:
    """The text of the last human message ("" when there is none)."""
    for message in reversed(messages):
        if role(message) == HUMAN:
            return text_of(message)
    return ""


def placed(messages: Sequence[Any], block: Any, position: Position) -> list[Any]:
    """``messages`` with ``block`` by the latest user message (or at the end)."""
    latest = next(
        (i for i in range(len(messages) - 1, -1, -1) if role(messages[i]) == HUMAN),
        None,
    )
    at = len(messages) if latest is None else latest + (position == "after")
    return [*messages[:at], block, *messages[at:]]


__all__ = [
    "EPHEMERAL_PREFIX",
    "Position",
    "capturable",
    "current_turn",
    "is_ephemeral",
    "is_final_answer",
    "latest_user_text",
    "placed",
    "reflection_turn",
]
