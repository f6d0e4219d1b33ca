"""What a capture is about: turns normalised from the caller's payload, and where
their memories go (:class:`Placement`)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from hindsight_lg._messages import AI, HUMAN, lookup, role, text_of
from hindsight_lg.model import Scope, SourceKind


@dataclass(slots=True)
class Turn:
    """One utterance to capture, normalised from whatever the caller passed."""

    text: str
    speaker: str | None
    source_ids: list[str]
    source_kind: SourceKind = SourceKind.USER_CONFIRMED
    truncated: bool = False


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
    messages = payload if isinstance(payload, (list, tuple)) else [payload]
    turns = []
    for msg in messages:
        kind = role(msg)
        if kind not in (HUMAN, AI):
            continue
        msg_id = lookup(msg, "id")
        ids = list(source_ids or []) or ([str(msg_id)] if msg_id else [])
        source = (
            SourceKind.USER_CONFIRMED if kind == HUMAN else SourceKind.AGENT_INFERRED
        )
        name = lookup(msg, "name") or (speaker if kind == HUMAN else "assistant")
        turns.append(Turn(text_of(msg), str(name or "user"), ids, source))
    return turns


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
