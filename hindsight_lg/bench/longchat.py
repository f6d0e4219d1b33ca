"""Long chats in RealMem's format: dated sessions of turns, and the questions asked.

The data (RealMemBench, Apache-2.0) is never shipped: callers pass a folder of
``<Persona>_dialogues_256k.json`` files, or one file. A file is
``{"_metadata": {"person_name": ...}, "dialogues": [session, ...]}``; a session
has ``session_uuid``, ``current_time`` (``"2025-12-21 (Sunday)"``) and
``dialogue_turns`` (``speaker`` "User" or "Assistant", ``content``). A user turn
with ``is_query: true`` is a question (``category_name``); the assistant turn
after it is its answer and lists in ``memory_used`` the memory points
(``session_uuid``, ``content``) the answer needs. Each session's
``extracted_memory`` ties its points to the turn they came from: how those
points become evidence turns is :mod:`hindsight_lg.bench.longchat_evidence`.

Sessions are kept in file order, which is the order the protocol replays them
in; their dates are not always increasing (one persona steps back 58 times).
A turn's id is ``<session_uuid>:<index>`` (0-based, as it sits in the file).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hindsight_lg.bench.locomo import DialogueTurn
from hindsight_lg.bench.longchat_evidence import (
    Located,
    point_text,
    query_evidence,
    split_updates,
)

UPDATING = "Dynamic Updating"
UNCATEGORISED = "uncategorised"
# Sessions of one day start a quarter of an hour apart from 08:00 (UTC), in
# file order; turns one second apart keep their order within a session.
_DAY_START = 8 * 3600.0
_SESSION_GAP = 900.0


@dataclass(frozen=True, slots=True)
class ChatQuery:
    """A question, asked at the start of its session, with what answers it.

    ``evidence`` holds the ids of the turns, in earlier sessions only, that
    hold the memory points the answer needs. ``answer`` is the assistant's
    reply that follows the question; ``points`` the text of those reachable
    points (the facts the reply rests on). For a Dynamic Updating question
    ``updated`` and ``old`` split the evidence into the newer value and the
    one it replaced (see :func:`~.longchat_evidence.split_updates`).
    """

    query_id: str
    text: str
    category: str
    session: str
    answer: str = ""
    points: str = ""
    evidence: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    old: tuple[str, ...] = ()

    @property
    def updating(self) -> bool:
        """Whether the question asks for a value that changed."""
        return self.category == UPDATING


@dataclass(frozen=True, slots=True)
class ChatSession:
    """One session: its uuid, name, date, turns and the questions opening it."""

    uuid: str
    name: str
    date: str
    start: float
    turns: tuple[DialogueTurn, ...]
    queries: tuple[ChatQuery, ...] = ()


@dataclass(frozen=True, slots=True)
class LongChat:
    """One user's sessions in file order.

    Example:
        >>> chat = LongChat("Ann", ())
        >>> (chat.name, len(chat.turns), len(chat.queries))
        ('Ann', 0, 0)
    """

    name: str
    sessions: tuple[ChatSession, ...]

    @property
    def turns(self) -> list[DialogueTurn]:
        return [t for s in self.sessions for t in s.turns]

    @property
    def queries(self) -> list[ChatQuery]:
        return [q for s in self.sessions for q in s.queries]


def parse_day(stamp: str) -> float:
    """POSIX seconds (UTC midnight) of a ``current_time`` such as ``2025-12-21 (Sunday)``.

    Raises:
        ValueError: the stamp does not start with a ``YYYY-MM-DD`` date.

    Example:
        >>> parse_day("1970-01-02 (Friday)")
        86400.0
    """
    try:
        day = datetime.strptime(stamp.strip()[:10], "%Y-%m-%d")
    except ValueError:
        raise ValueError(f"unrecognised session date {stamp!r}") from None
    return day.replace(tzinfo=UTC).timestamp()


def load_longchats(
    path: str | Path,
    names: Sequence[str] | None = None,
    sessions: int | None = None,
) -> list[LongChat]:
    """The chats in a file, or in every ``*.json`` file of a folder (by name).

    ``names`` keeps the chats of those personas; ``sessions`` the first N
    sessions of each (a question's evidence lies in earlier sessions, so it
    is the same as in the whole file).

    Raises:
        FileNotFoundError: the path, or a named persona, is missing.
        ValueError: a file is not RealMem-shaped.
    """
    files = _files(Path(path))
    chats = [load_longchat(f, sessions) for f in files]
    if names is None:
        return chats
    found = {c.name: c for c in chats}
    missing = [n for n in names if n not in found]
    if missing:
        raise FileNotFoundError(
            f"no chats of {', '.join(missing)} in {path}; found: {', '.join(found)}"
        )
    return [found[n] for n in names]


def _files(p: Path) -> list[Path]:
    if not p.exists():
        raise FileNotFoundError(
            f"{p} not found (looked for {p.resolve()}): pass --data with a "
            "folder of RealMem's <Persona>_dialogues_256k.json files, or one "
            "such file"
        )
    files = sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files:
        raise FileNotFoundError(f"no .json files in {p}")
    return files


def load_longchat(path: Path, sessions: int | None = None) -> LongChat:
    """One file's chat (its first ``sessions`` sessions when given).

    Raises:
        ValueError: the file is not RealMem-shaped (the message says where).
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("dialogues"), list):
        raise ValueError(f"{path}: expected an object with a 'dialogues' list")
    raw = data["dialogues"][:sessions]
    _check_shape(path, raw)
    meta = data.get("_metadata")
    named = meta.get("person_name") if isinstance(meta, dict) else None
    name = str(named or path.stem.split("_dialogues")[0])
    uuids = [str(s.get("session_uuid") or f"s{i}") for i, s in enumerate(raw)]
    starts = _starts(path, raw)
    turns = [_turns(s, uuids[i], i, starts[i]) for i, s in enumerate(raw)]
    located = Located(raw, uuids, turns)
    return LongChat(
        name,
        tuple(
            ChatSession(
                uuid=uuids[i],
                name=str(session.get("session_identifier", uuids[i])),
                date=str(session.get("current_time", "")),
                start=starts[i],
                turns=turns[i],
                queries=tuple(_queries(session, i, located)),
            )
            for i, session in enumerate(raw)
        ),
    )


def _check_shape(path: Path, raw: Sequence[Any]) -> None:
    """Sessions are objects whose ``dialogue_turns`` is a list of objects."""
    for i, session in enumerate(raw):
        turns = session.get("dialogue_turns") if isinstance(session, dict) else None
        if not isinstance(turns, list) or not all(isinstance(t, dict) for t in turns):
            raise ValueError(
                f"{path}: session {i} needs 'dialogue_turns', a list of objects "
                "with 'speaker' and 'content'"
            )


def _starts(path: Path, raw: Sequence[dict[str, Any]]) -> list[float]:
    seen: dict[float, int] = {}
    out = []
    for i, session in enumerate(raw):
        try:
            day = parse_day(str(session.get("current_time", "")))
        except ValueError as exc:
            raise ValueError(f"{path}: session {i}: {exc} (YYYY-MM-DD)") from None
        out.append(day + _DAY_START + _SESSION_GAP * seen.get(day, 0))
        seen[day] = seen.get(day, 0) + 1
    return out


def _turns(
    session: dict[str, Any], uuid: str, position: int, start: float
) -> tuple[DialogueTurn, ...]:
    return tuple(
        DialogueTurn(
            dia_id=f"{uuid}:{i}",
            speaker=str(raw.get("speaker", "")),
            text=str(raw.get("content", "")).strip(),
            event_time=start + i,
            session=position,
        )
        for i, raw in enumerate(session["dialogue_turns"])
    )


def _queries(
    session: dict[str, Any], position: int, located: Located
) -> Iterable[ChatQuery]:
    turns = session["dialogue_turns"]
    for i, raw in enumerate(turns):
        if raw.get("is_query"):
            reply = turns[i + 1] if i + 1 < len(turns) else {}
            yield _query(raw, reply, f"{located.uuids[position]}:{i}", located)


def _query(
    raw: dict[str, Any], reply: dict[str, Any], turn_id: str, located: Located
) -> ChatQuery:
    """The question at ``turn_id``, its answer and its reachable evidence."""
    position = located.position(turn_id)
    points = [p for p in reply.get("memory_used") or [] if isinstance(p, dict)]
    reachable = [p for p in points if located.before(p, position)]
    listed = raw.get("evidence")
    found = query_evidence(
        reachable, listed if isinstance(listed, list) else [], located
    )
    evidence = tuple(e for e in found if located.position(e) < position)
    category = str(raw.get("category_name") or UNCATEGORISED)
    updated, old = (
        split_updates(evidence, located) if category == UPDATING else ((), ())
    )
    return ChatQuery(
        query_id=str(raw.get("query_id") or turn_id),
        text=str(raw.get("content", "")).strip(),
        category=category,
        session=turn_id.rsplit(":", 1)[0],
        answer=str(reply.get("content", "")).strip() if _is_assistant(reply) else "",
        points="\n".join(point_text(p) for p in reachable),
        evidence=evidence,
        updated=updated,
        old=old,
    )


def _is_assistant(turn: dict[str, Any]) -> bool:
    return str(turn.get("speaker", "")).lower() == "assistant"
