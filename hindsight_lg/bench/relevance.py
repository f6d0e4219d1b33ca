"""Relevance of what recall returns, on a labelled set of synthetic users.

Each user's memories are captured in order (an hour apart) into a namespace
of their own; each question is labelled with the memories that bear on it,
by a distinctive substring of the memory, and an empty label means nothing
in memory answers it. For every question recall runs at its defaults and:

* *precision* is the share of returned memories that bear on the question
  (over questions with an answer),
* *recall* the share of the labelled memories returned,
* *lines* the memory lines injected (``len(result)``), and *tokens* the
  size of ``to_prompt()`` (``ceil(chars / 4)``), per question,
* a question with no answer is *clean* when nothing is returned and the
  prompt block is empty.

The set used by the tests is ``tests/memory/data/relevance.json``.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from hindsight_lg._text import approx_tokens

HOUR = 3600.0
START = 1_700_000_000.0


@dataclass(frozen=True, slots=True)
class Labelled:
    """A question and the substrings of the memories that bear on it."""

    user: str
    text: str
    answers: tuple[str, ...]
    # How the question is put ("first-person", "tool-query"...); "" unlabelled.
    phrasing: str = ""


@dataclass(frozen=True, slots=True)
class User:
    """A synthetic user: what they said, in order, and the questions asked."""

    name: str
    memories: tuple[str, ...]
    questions: tuple[Labelled, ...]


@dataclass(slots=True)
class Figures:
    """What the set measured, per question and overall."""

    precision: list[float] = field(default_factory=list)
    recall: list[float] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    unanswered_lines: list[int] = field(default_factory=list)
    unanswered_tokens: list[int] = field(default_factory=list)

    def extend(self, other: Figures) -> None:
        """Add ``other``'s questions to these."""
        for f in fields(self):
            getattr(self, f.name).extend(getattr(other, f.name))

    def summary(self) -> dict[str, float]:
        """Means: precision, recall, lines and tokens per answerable question, and
        lines, tokens and the clean share of the questions without an answer."""
        clean = [n == 0 for n in self.unanswered_tokens]
        return {
            "precision": _mean(self.precision),
            "recall": _mean(self.recall),
            "lines": _mean(self.lines),
            "tokens": _mean(self.tokens),
            "unanswered_lines": _mean(self.unanswered_lines),
            "unanswered_tokens": _mean(self.unanswered_tokens),
            "unanswered_clean": _mean([float(c) for c in clean]),
        }


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def load_set(path: str | Path) -> list[User]:
    """The users of a labelled set file (see ``tests/memory/data/relevance.json``)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [
        User(
            u["name"],
            tuple(u["memories"]),
            tuple(
                Labelled(u["name"], q["q"], tuple(q["answers"]), q.get("phrasing", ""))
                for q in u["questions"]
            ),
        )
        for u in data["users"]
    ]


def bears_on(content: str, answers: Sequence[str]) -> bool:
    """Whether a returned memory's text is one of the labelled answers."""
    return any(a in content for a in answers)


def evaluate(
    users: Sequence[User], memory: Any, recall: Callable[..., Any] | None = None
) -> Figures:
    """Capture every user into ``memory`` and score each question's recall."""
    return evaluate_by(users, memory, lambda _: "", recall).get("", Figures())


def evaluate_by(
    users: Sequence[User],
    memory: Any,
    key: Callable[[Labelled], str],
    recall: Callable[..., Any] | None = None,
) -> dict[str, Figures]:
    """:func:`evaluate` with the figures kept apart per ``key`` of each question.

    Example: ``evaluate_by(users, memory, lambda q: q.phrasing)`` gives the
    figures of first-person questions beside those of tool queries.
    """
    split: dict[str, Figures] = {}
    for user in users:
        namespace = f"rel-{user.name}"
        for i, text in enumerate(user.memories):
            memory.capture(
                text, namespace=namespace, speaker="user", event_time=START + i * HOUR
            )
        memory.flush()
        for q in user.questions:
            ask = recall or memory.recall
            result = ask(q.text, namespace=namespace, timeout=None)
            _score(split.setdefault(key(q), Figures()), q, result)
    return split


def _score(figures: Figures, q: Labelled, result: Any) -> None:
    contents = [m.record.content for m in result.memories]
    tokens = approx_tokens(result.to_prompt())
    if not q.answers:
        figures.unanswered_lines.append(len(contents))
        figures.unanswered_tokens.append(tokens)
        return
    hits = [c for c in contents if bears_on(c, q.answers)]
    found = [a for a in q.answers if any(a in c for c in contents)]
    figures.precision.append(len(hits) / len(contents) if contents else 0.0)
    figures.recall.append(len(found) / len(q.answers))
    figures.lines.append(len(contents))
    figures.tokens.append(tokens)
