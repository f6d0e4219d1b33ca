"""LoCoMo: parse the file, replay conversations into memory, normalise evidence.

The data (``locomo10.json``, CC BY-NC 4.0) is never shipped: callers pass its
path. Each conversation is a list of dated sessions of turns with ids such as
``D3:12``; each question lists the turns that hold its answer.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

CATEGORIES = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
_SESSION = re.compile(r"session_(\d+)")
_EVIDENCE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)")
_WHEN = re.compile(
    r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})", re.I
)


@dataclass(frozen=True, slots=True)
class DialogueTurn:
    """One utterance: who said it, when, its id, and its text (captions added)."""

    dia_id: str
    speaker: str
    text: str
    event_time: float
    session: int


@dataclass(frozen=True, slots=True)
class Question:
    """A question with the ids of the turns that answer it."""

    text: str
    category: int
    evidence: tuple[str, ...]
    answer: str = ""


@dataclass(slots=True)
class Conversation:
    """A LoCoMo sample: its turns in order and its questions."""

    sample_id: str
    index: int
    turns: list[DialogueTurn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    @property
    def speakers(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.speaker for t in self.turns))


def normalise_evidence(raw: Iterable[Any]) -> tuple[str, ...]:
    """Canonical evidence ids (``D8:6``) from the file's sometimes malformed lists.

    Handles several ids in one string (``"D8:6; D9:17"``, ``"D9:1 D4:4"``),
    stray colons (``"D:11:26"``), zero padding (``"D30:05"``) and drops
    fragments without a turn number (``"D"``); order kept, duplicates removed.

    Example:
        >>> normalise_evidence(["D8:6; D9:17", "D30:05", "D", "D:11:26"])
        ('D8:6', 'D9:17', 'D30:5', 'D11:26')
    """
    found: list[str] = []
    for item in raw:
        for session, turn in _EVIDENCE.findall(str(item)):
            found.append(f"D{int(session)}:{int(turn)}")
    return tuple(dict.fromkeys(found))


def parse_when(text: str) -> float:
    """POSIX seconds (UTC) of a LoCoMo session stamp such as ``1:56 pm on 8 May, 2023``.

    Raises:
        ValueError: the stamp is not in LoCoMo's format.
    """
    m = _WHEN.search(text)
    if m is None:
        raise ValueError(f"unrecognised session date {text!r}")
    hour, minute, half, day, month, year = m.groups()
    stamp = f"{int(hour)}:{minute} {half.upper()} {int(day)} {month[:3].title()} {year}"
    when = datetime.strptime(stamp, "%I:%M %p %d %b %Y").replace(tzinfo=UTC)
    return when.timestamp()


def turn_text(turn: dict[str, Any]) -> str:
    """The turn's text; a shared image adds its caption so it can be found."""
    text = str(turn.get("text", "")).strip()
    caption = str(turn.get("blip_caption", "") or "").strip()
    return f"{text} [shares {caption}]" if caption else text


def _turns(conv: dict[str, Any]) -> list[DialogueTurn]:
    sessions = sorted(
        int(m.group(1)) for k in conv if (m := _SESSION.fullmatch(k)) and conv[k]
    )
    turns: list[DialogueTurn] = []
    for s in sessions:
        start = parse_when(str(conv[f"session_{s}_date_time"]))
        for i, raw in enumerate(conv[f"session_{s}"]):
            # One second apart keeps the order of turns within a session.
            turns.append(
                DialogueTurn(
                    dia_id=str(raw["dia_id"]),
                    speaker=str(raw["speaker"]),
                    text=turn_text(raw),
                    event_time=start + i,
                    session=s,
                )
            )
    return turns


def _questions(qa: Sequence[dict[str, Any]]) -> list[Question]:
    out = []
    for q in qa:
        evidence = normalise_evidence(q.get("evidence") or [])
        answer = q.get("answer", q.get("adversarial_answer", ""))
        out.append(
            Question(str(q["question"]), int(q["category"]), evidence, str(answer))
        )
    return out


def load_locomo(
    path: str | Path, indexes: Sequence[int] | None = None
) -> list[Conversation]:
    """Read conversations (all, or those at ``indexes``) from a LoCoMo JSON file.

    Raises:
        FileNotFoundError: with a hint on where the file is expected.
        ValueError: the file is not LoCoMo-shaped.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(
            f"{p} not found: pass --data PATH to locomo10.json "
            "(expected at ../shared/data/locomo/locomo10.json)"
        )
    data = json.loads(p.read_text(encoding="utf-8"))
    if not isinstance(data, list):
        raise ValueError(f"{p} is not a LoCoMo file: expected a list of samples")
    wanted = range(len(data)) if indexes is None else indexes
    convs = []
    for i in wanted:
        sample = data[i]
        convs.append(
            Conversation(
                sample_id=str(sample.get("sample_id", i)),
                index=i,
                turns=_turns(sample["conversation"]),
                questions=_questions(sample.get("qa", [])),
            )
        )
    return convs


def replay(
    memory: Any,
    conv: Conversation,
    namespace: str,
    progress: Callable[[int, int], None] | None = None,
) -> None:
    """Capture a conversation turn by turn, in order, through the public API."""
    for n, t in enumerate(conv.turns, 1):
        memory.capture(
            t.text,
            namespace=namespace,
            speaker=t.speaker,
            event_time=t.event_time,
            source_ids=[t.dia_id],
            thread_id=f"{conv.sample_id}-s{t.session}",
        )
        if progress is not None:
            progress(n, len(conv.turns))


def parse_range(spec: str) -> list[int]:
    """``"0-4"``, ``"0,2,5-7"`` -> sorted indexes.

    Raises:
        ValueError: a malformed spec.
    """
    out: set[int] = set()
    for part in filter(None, (p.strip() for p in spec.split(","))):
        lo, _, hi = part.partition("-")
        start, end = int(lo), int(hi or lo)
        if end < start:
            raise ValueError(f"bad range {part!r}")
        out.update(range(start, end + 1))
    return sorted(out)
