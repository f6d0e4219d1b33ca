"""What a capture is about: turns normalised from the caller's payload, and where
their memories go (:class:`Placement`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hindsight_lg._messages import AI, HUMAN, as_message, lookup, role, text_of
from hindsight_lg.backends.base import fit_label
from hindsight_lg.model import Scope, SourceKind


@dataclass(slots=True)
class Turn:
    """One utterance to capture, normalised from whatever the caller passed."""

    text: str
    speaker: str | None
    source_ids: list[str]
    source_kind: SourceKind = SourceKind.USER_CONFIRMED
    truncated: bool = False
    # An assistant message reporting a tool's result (kept when passed on).
    after_tool: bool = False


def to_turns(
    payload: Any, speaker: str | None, source_ids: Sequence[str] | None
) -> list[Turn]:
    """Normalise text, a message, or a list of messages into turns.

    Tool and system messages are skipped: they are not what people said.
    """
    if isinstance(payload, bytes):
        raise ValueError("capture() takes text or messages, not bytes")
    if isinstance(payload, str):
        return [Turn(payload, speaker, list(source_ids or []))]
    payload = as_message(payload)
    messages = payload if isinstance(payload, (list, tuple)) else [payload]
    messages = [as_message(m) for m in messages]
    turns = []
    after_tool = False
    for msg in messages:
        kind = role(msg)
        reports = after_tool or bool(lookup(msg, "after_tool"))
        after_tool = kind == "tool"
        if kind not in (HUMAN, AI):
            continue
        msg_id = lookup(msg, "id")
        ids = list(source_ids or []) or ([_label(str(msg_id))] if msg_id else [])
        source = (
            SourceKind.USER_CONFIRMED if kind == HUMAN else SourceKind.AGENT_INFERRED
        )
        name = lookup(msg, "name") or (speaker if kind == HUMAN else "assistant")
        turn = Turn(text_of(msg), _label(str(name or "user")), ids, source)
        turn.after_tool = kind == AI and reports
        turns.append(turn)
    return turns


_REMEMBER = re.compile(
    r"\b(?:remember|note (?:that|this|down)|make a note|keep in mind|"
    r"save (?:this|that)|don't forget|write (?:this|that) down|memori[sz]e)\b"
    r"|记住|记下|别忘了|记一下|帮我记",
    re.IGNORECASE,
)


def asks_to_remember(text: str) -> bool:
    """Whether a user's turn asks the assistant to keep something."""
    return bool(_REMEMBER.search(text))


def kept_turns(turns: Sequence[Turn], previous: Turn | None) -> list[bool]:
    """Which turns may become memories: the people's, and replies asked to be kept.

    An assistant's reply is not a fact about the user: it restates what
    recall gave it ("From memory: ..."), what a memory tool just wrote, or
    says something generic. It is kept (as agent-inferred) only when the
    user's turn before it (``previous`` is the thread's last turn before
    these) asked to remember ("remember that", "记住"), or when it reports a
    tool's result the caller chose to pass on (``capture_tools=True`` in the
    nodes). The raw reply stays in the thread and the audit trail.
    """
    out = []
    for turn in turns:
        asked = previous is not None and previous.source_kind is not (
            SourceKind.AGENT_INFERRED
        )
        out.append(
            turn.source_kind is not SourceKind.AGENT_INFERRED
            or turn.after_tool
            or (asked and previous is not None and asks_to_remember(previous.text))
        )
        previous = turn
    return out


def _label(value: str) -> str:
    """A message's name or id cut to what a record keeps (see :func:`fit_label`)."""
    return fit_label(value)


@dataclass(frozen=True, slots=True)
class Placement:
    """Where a capture's memories go: tenant, writing agent, scope and thread."""

    namespace: str
    agent_id: str = ""
    scope: Scope = Scope.PRIVATE
    thread_id: str = ""


def rest_of_turn(text: str, event: str) -> str:
    """The turn's words outside ``event`` (empty when the event is the whole turn)."""
    rest = " ".join(text.replace(event, " ", 1).split())
    return rest if re.search(r"\w{3}", rest) else ""


def capped(turn: Turn, limit: int) -> Turn:
    """``turn`` cut to ``limit`` characters (plus room for edge whitespace)."""
    if len(turn.text) <= limit:
        return turn
    if "\x00" in turn.text:
        raise ValueError("text contains NUL bytes: binary data is not a memory")
    head = turn.text.lstrip()[: limit + 1]
    return replace(turn, text=head, truncated=len(head) > limit)


def turn_text(turn: Turn) -> str:
    """The turn as embedded for context: ``speaker: text``."""
    return f"{turn.speaker}: {turn.text}" if turn.speaker else turn.text
