"""Extraction with a LangChain chat model, validated, with the heuristics as fallback.

Model output is untrusted input: anything that does not validate (broken JSON,
wrong types, empty or huge values) falls back to the heuristic extractor, the
failure is logged, and nothing of the turn is lost.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from hindsight_lg.memory.language.encode import (
    EventDraft,
    Extraction,
    Extractor,
    extract,
)
from hindsight_lg.memory.language.timeparse import find_window
from hindsight_lg.model import Kind
from hindsight_lg.telemetry import FALLBACK, degrade

_MAX_EVENTS = 20
_PROMPT = (
    "Split the user's turn into separate memorable events. For each give: content "
    "(the speaker's own words for the event, in the turn's language, with its "
    "subject kept: 'I also enjoy espresso', never 'enjoy espresso'), kind (one of preference, "
    "fact, task, event, query, emotion, rule), salience (0-1: how worth remembering), "
    "entities (names of people, places, things). Also list causes as pairs of event "
    "indexes [cause, effect].\n\nTurn:\n{text}"
)


class ExtractedEvent(BaseModel):
    """One event as the model describes it."""

    content: str = Field(min_length=1, max_length=2000)
    kind: Kind = Kind.EVENT
    salience: float = Field(default=0.5, ge=0.0, le=1.0)
    entities: list[str] = Field(default_factory=list, max_length=30)


class ExtractedTurn(BaseModel):
    """The structured output requested from the model."""

    events: list[ExtractedEvent] = Field(default_factory=list, max_length=_MAX_EVENTS)
    causes: list[tuple[int, int]] = Field(default_factory=list, max_length=50)


def parse_extraction(raw: Any) -> ExtractedTurn:
    """Validate model output given as a model instance, dict or JSON string.

    Raises:
        ValueError: the output does not describe a turn (the caller falls back).
    """
    if isinstance(raw, ExtractedTurn):
        return raw
    if hasattr(raw, "content") and not isinstance(raw, dict):
        raw = raw.content
    try:
        data = json.loads(raw) if isinstance(raw, (str, bytes)) else raw
        return ExtractedTurn.model_validate(data)
    except (
        ValidationError,
        json.JSONDecodeError,
        TypeError,
        UnicodeDecodeError,
    ) as exc:
        raise ValueError(f"unusable extraction output: {str(exc)[:200]}") from exc


def _to_extraction(
    turn: ExtractedTurn, speaker: str | None, ref_time: float
) -> Extraction:
    drafts = []
    for e in turn.events:
        window = find_window(e.content, ref_time)
        drafts.append(
            EventDraft(
                content=e.content.strip(),
                kind=e.kind,
                salience=e.salience,
                entities=[x.strip() for x in e.entities if x.strip()][:30],
                participants=[speaker] if speaker else [],
                mentioned_time=window.start if window else None,
            )
        )
    n = len(drafts)
    causes = [(a, b) for a, b in turn.causes if 0 <= a < n and 0 <= b < n and a != b]
    return Extraction(events=drafts, causes=causes)


def llm_extractor(llm: Any) -> Extractor:
    """An extractor that asks ``llm`` (structured output) and falls back to heuristics."""
    try:
        structured = llm.with_structured_output(ExtractedTurn)
    except (NotImplementedError, AttributeError):
        structured = llm

    def run(text: str, speaker: str | None, ref_time: float) -> Extraction:
        try:
            turn = parse_extraction(structured.invoke(_PROMPT.format(text=text)))
            if not turn.events:
                raise ValueError("model returned no events")
            return _to_extraction(turn, speaker, ref_time)
        except Exception as exc:  # model errors of any kind must not lose the turn
            degrade(
                FALLBACK,
                "the model's extraction failed: heuristics extracted the turn",
                log_event="llm_extraction_failed",
                error=str(exc)[:200],
            )
            return extract(text, speaker=speaker, ref_time=ref_time)

    return run
