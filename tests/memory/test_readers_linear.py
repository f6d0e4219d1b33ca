"""Every text reader of capture and recall runs in time linear in its input.

One tenant's text must not hold the threads others share: a reader that
backtracks over a long run (of hyphens, spaces, digits, capitals) costs the
square of the run's length. Each reader is timed on an adversarial text at
two lengths; per character, the long one may cost no more than a few times
the short one (a quadratic reader costs eight times more at 8x the length).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import _text
from hindsight_lg.memory.language import (
    address,
    asking,
    cues,
    encode,
    frames,
    judge,
    people,
    relations,
    slots,
    speech,
    timeparse,
)
from hindsight_lg.memory.recall import lines
from hindsight_lg.memory.recall.result import build_probe

READERS: dict[str, Callable[[str], object]] = {
    "extract": lambda s: encode.extract(s, speaker="user", ref_time=1.7e9),
    "relations": relations.relations,
    "relation_mentions": relations.relation_mentions,
    "readings": slots.readings,
    "split_change": frames.split_change,
    "cues": cues.cues,
    "find_window": lambda s: timeparse.find_window(s, 1.7e9),
    "asks_for_many": asking.asks_for_many,
    "without_people": lambda s: people.without_people(s, ["Caroline"]),
    "as_the_user_says_it": people.as_the_user_says_it,
    "only_addressed": lambda s: address.only_addressed(s, ["Caroline"]),
    "terms": _text.terms,
    "split_events": _text.split_events,
    "inert": _text.inert,
    "judge_texts": lambda s: judge.judge_texts(s, "I live in Paris"),
    "chatter": lines.chatter,
    "aside": speech.aside,
    "build_probe": lambda s: build_probe(s, now=1.7e9, context=[s[:300]]),
}
# Runs that made readers backtrack, and their neighbours: separators,
# hyphenated and apostrophe runs, digits, capitals, mixed scripts.
UNITS = [
    '"',
    "「",
    "Bob ",
    "the user ",
    "听小",
    "A-",
    "Q-",
    "a'",
    "A'",
    "Mel's ",
    " ",
    ". ",
    ", ",
    "1",
    "1-",
    "12:",
    "x",
    "Aa ",
    "I'm ",
    "My sister ",
    "instead of ",
    "从",
    "三",
    "我的",
    "ab上",
    "a\u200b",
    "\u3164",
    "Caroline, my ",
    "I switched from ",
    "—",
]
SHORT, LONG = 1_000, 8_000


def _seconds(read: Callable[[str], object], text: str) -> float:
    best = float("inf")
    for i in range(3):
        varied = f"{text} {i}"  # a new text each time: no reader's cache answers
        start = time.perf_counter()
        read(varied)
        best = min(best, time.perf_counter() - start)
    return best


def _run(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def _check(name: str, unit: str) -> None:
    read = READERS[name]
    short = _seconds(read, _run(unit, SHORT)) / SHORT
    long = _seconds(read, _run(unit, LONG)) / LONG
    # 2 microseconds a character of slack: timer noise on a loaded machine.
    assert long <= 4 * short + 2e-6, (name, unit, short, long)


@pytest.mark.parametrize("unit", UNITS)
@pytest.mark.parametrize("name", sorted(READERS))
def test_a_reader_costs_the_same_per_character_on_every_known_run(
    name: str, unit: str
) -> None:
    """Per character, 8,000 characters of a run cost within 4x of 1,000 of it."""
    _check(name, unit)


# Short units drawn from the characters readers key on.
_TRICKY = "Aa1 -'.,?s我的三从\u200b\u3164"


@pytest.mark.parametrize("name", sorted(READERS))
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(unit=st.text(alphabet=_TRICKY, min_size=1, max_size=4))
def test_a_reader_costs_the_same_per_character_on_any_run(name: str, unit: str) -> None:
    """Per character, any repeated unit of tricky characters costs the same at 8x the length."""
    _check(name, unit)
