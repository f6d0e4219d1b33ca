"""Resolve time expressions ("last week", "in May 2023", "上周三", "三个月前") to windows.

Windows are relative to a reference time: the query's time at recall, the
event's time at capture. Only expressions found in the text are resolved;
anything else gives ``None`` so the caller searches without a time filter.
A phrase whose date falls outside what a calendar can hold ("december 9999",
"99999999 days ago", "0000年1月") is not a window either: it is ignored, never
raised, because it arrives in a user's message on the turn's path.

English phrases are read here, Chinese ones in ``timeparse_zh``; both build
their windows with ``timewindow``, so twins ("last Friday", 上周五) agree.

Example:
    >>> from datetime import datetime, UTC
    >>> ref = datetime(2023, 6, 14, tzinfo=UTC).timestamp()
    >>> w = find_window("what did I do last week?", ref)
    >>> (to_dt(w.start).date().isoformat(), to_dt(w.end).date().isoformat())
    ('2023-06-05', '2023-06-12')
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from hindsight_lg.memory.language.timeparse_zh import chinese_window
from hindsight_lg.memory.language.timewindow import TimeWindow as TimeWindow
from hindsight_lg.memory.language.timewindow import (
    around,
    day_start,
    days_window,
    month_window,
    shift_month,
    week_start,
    weekday_window,
    year_window,
)
from hindsight_lg.memory.language.timewindow import to_dt as to_dt

# TimeWindow and to_dt moved to timewindow; re-exported (``as``) because
# callers and users import them from here.
_T = TypeVar("_T")
# A day inside each end of datetime's range, so local-time conversions fit too.
_EARLIEST = datetime(1, 1, 2, tzinfo=UTC).timestamp()
_LATEST = datetime(9999, 12, 30, tzinfo=UTC).timestamp()
MONTHS = {
    m: i + 1
    for i, m in enumerate(
        "january february march april may june july august september october "
        "november december".split()
    )
}
MONTHS.update({m[:3]: i for m, i in list(MONTHS.items())})
WEEKDAYS = {
    d: i
    for i, d in enumerate(
        "monday tuesday wednesday thursday friday saturday sunday".split()
    )
}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_WORD_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "few": 3,
    "couple of": 2,
}


def _simple(ref: datetime) -> dict[str, Callable[[str], TimeWindow]]:
    """Fixed phrases and their windows, each built only when its phrase is present.

    Near the ends of the calendar "next year" has no start while "today"
    still does.
    """
    today = day_start(ref)
    return {
        "today": lambda p: days_window(today, 1, p),
        "tonight": lambda p: days_window(today, 1, p),
        "yesterday": lambda p: days_window(today - timedelta(1), 1, p),
        "tomorrow": lambda p: days_window(today + timedelta(1), 1, p),
        "last week": lambda p: days_window(week_start(today, -1), 7, p),
        "this week": lambda p: days_window(week_start(today), 7, p),
        "next week": lambda p: days_window(week_start(today, 1), 7, p),
        "last weekend": lambda p: days_window(week_start(today) - timedelta(2), 2, p),
        "last month": lambda p: month_window(*shift_month(ref.year, ref.month, -1), p),
        "last year": lambda p: year_window(ref.year - 1, p),
        "this year": lambda p: year_window(ref.year, p),
        "next year": lambda p: year_window(ref.year + 1, p),
    }


def _english(text: str, ref: datetime) -> TimeWindow | None:
    low = text.lower()
    for phrase, build in _simple(ref).items():
        if re.search(rf"\b{phrase}\b", low):
            return _safe(build, phrase)
    return _english_patterns(low, ref, day_start(ref))


def _english_patterns(low: str, ref: datetime, today: datetime) -> TimeWindow | None:
    m = re.search(
        r"\b(\d+|a|an|one|two|three|four|five|six|few|couple of)\s+"
        r"(day|week|month|year)s?\s+ago\b",
        low,
    )
    if m:
        n = int(m.group(1)) if m.group(1).isdigit() else _WORD_NUMBERS[m.group(1)]
        unit = _UNITS[m.group(2)]
        return around(today, -n * unit, unit if n > 0 else 1, m.group(0))
    m = re.search(
        r"\b(last|next|this|on)\s+(monday|tuesday|wednesday|thursday|friday|"
        r"saturday|sunday)\b",
        low,
    )
    if m:
        weeks = {"last": -1, "next": 1}.get(m.group(1), 0)
        return weekday_window(
            today, WEEKDAYS[m.group(2)], weeks, m.group(0), latest=m.group(1) == "on"
        )
    m = re.search(
        r"\b(january|february|march|april|may|june|july|august|september|"
        r"october|november|december|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|"
        r"nov|dec)\b\.?,?\s*(\d{4})?",
        low,
    )
    if m and (
        m.group(2) or re.search(rf"\b(in|during|of|since)\s+{m.group(1)}\b", low)
    ):
        year = int(m.group(2)) if m.group(2) else ref.year
        return month_window(year, MONTHS[m.group(1)[:3]], m.group(0).strip())
    m = re.search(r"\b(?:in|during|since)\s+((?:19|20)\d{2})\b", low)
    if m:
        return year_window(int(m.group(1)), m.group(0))
    return None


def _safe(build: Callable[..., _T], *args: Any) -> _T | None:
    """``build(*args)``, or ``None`` when its date is past the calendar's ends.

    ``datetime`` holds years 1 to 9999: "december 9999" needs January 10000,
    "99999999 days ago" a year before 1, "99999999年前" an int past C's.
    Big digit strings fail in ``int()`` with ``ValueError`` too.
    """
    try:
        return build(*args)
    except (OverflowError, ValueError, OSError):
        return None


def find_window(text: str, ref: float) -> TimeWindow | None:
    """The first time expression in ``text`` resolved against ``ref`` (POSIX seconds).

    Chinese phrases are looked for first (``timeparse_zh``), then English ones.

    Returns:
        The window, or ``None`` when the text names no time, or names one
        outside the calendar (year 0, year 10000, ...) or no date at all
        (二月三十号), or ``ref`` itself is not a representable time.
    """
    ref_dt = _safe(to_dt, ref)
    if ref_dt is None:
        return None
    for parse in (chinese_window, _english):
        window = _safe(parse, text, ref_dt)
        if window is not None:
            return window
    return None


def check_event_time(value: object) -> float:
    """``value`` as POSIX seconds, checked to be a time a calendar can hold.

    Args:
        value: seconds since the epoch (an ``int`` or ``float``).

    Returns:
        The value as a ``float``.

    Raises:
        TypeError: not a number (a string, a bool, a datetime).
        ValueError: NaN, infinite, or outside years 1 to 9999.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(
            f"event_time must be POSIX seconds (int or float), not "
            f"{type(value).__name__}: use datetime.timestamp()"
        )
    seconds = float(value)
    if not _EARLIEST <= seconds <= _LATEST:  # NaN fails both comparisons
        raise ValueError(
            f"event_time {value!r} is not a time between the years 1 and 9999: "
            "pass POSIX seconds, e.g. datetime.now(UTC).timestamp()"
        )
    return seconds
