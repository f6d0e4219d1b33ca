"""Resolve time expressions ("last week", "in May 2023", "上周三", "三个月前") to windows.

Windows are relative to a reference time: the query's time at recall, the
event's time at capture. Only expressions found in the text are resolved;
anything else gives ``None`` so the caller searches without a time filter.
A phrase whose date falls outside what a calendar can hold ("december 9999",
"99999999 days ago", "0000年1月") is not a window either: it is ignored, never
raised, because it arrives in a user's message on the turn's path.

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
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

_T = TypeVar("_T")
_DAY = 86400.0
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
_CN_DIGITS = {
    "零": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
    "十": 10,
}
_CN_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}
_CN_UNITS = {"天": 1, "日": 1, "周": 7, "星期": 7, "个月": 30, "月": 30, "年": 365}


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A half-open interval of POSIX seconds, plus the phrase it came from."""

    start: float
    end: float
    phrase: str = ""

    def contains(self, ts: float) -> bool:
        """True when ``ts`` falls inside the window."""
        return self.start <= ts < self.end

    @property
    def center(self) -> float:
        """Middle of the window."""
        return (self.start + self.end) / 2


def to_dt(ts: float) -> datetime:
    """POSIX seconds to an aware UTC datetime."""
    return datetime.fromtimestamp(ts, UTC)


def _day_start(dt: datetime) -> datetime:
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


def _window(start: datetime, days: float, phrase: str) -> TimeWindow:
    begin = start.timestamp()
    return TimeWindow(begin, begin + days * _DAY, phrase)


def _simple_window(
    start: Callable[[], datetime], days: float, phrase: str
) -> TimeWindow:
    return _window(start(), days, phrase)


def _cn_number(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    if text in _CN_DIGITS:
        return _CN_DIGITS[text]
    if text.startswith("十") and len(text) == 2:
        return 10 + _CN_DIGITS.get(text[1], 0)
    if len(text) == 2 and text[1] == "十":
        return _CN_DIGITS.get(text[0], 0) * 10
    if len(text) == 3 and text[1] == "十":
        return _CN_DIGITS.get(text[0], 0) * 10 + _CN_DIGITS.get(text[2], 0)
    return None


def _month_window(year: int, month: int, phrase: str) -> TimeWindow:
    start = datetime(year, month, 1, tzinfo=UTC)
    nxt = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=UTC)
    return TimeWindow(start.timestamp(), nxt.timestamp(), phrase)


def _english(text: str, ref: datetime) -> TimeWindow | None:
    low = text.lower()
    today = _day_start(ref)
    # Each start is computed only when its phrase is present: near the ends
    # of the calendar, "next year" has no start while "today" still does.
    simple: dict[str, tuple[Callable[[], datetime], int]] = {
        "today": (lambda: today, 1),
        "tonight": (lambda: today, 1),
        "yesterday": (lambda: today - timedelta(1), 1),
        "tomorrow": (lambda: today + timedelta(1), 1),
        "last week": (lambda: today - timedelta(today.weekday() + 7), 7),
        "this week": (lambda: today - timedelta(today.weekday()), 7),
        "next week": (lambda: today + timedelta(7 - today.weekday()), 7),
        "last weekend": (lambda: today - timedelta(today.weekday() + 2), 2),
        "last month": (lambda: today.replace(day=1) - timedelta(1), 0),
        "last year": (lambda: datetime(ref.year - 1, 1, 1, tzinfo=UTC), 365),
        "this year": (lambda: datetime(ref.year, 1, 1, tzinfo=UTC), 366),
        "next year": (lambda: datetime(ref.year + 1, 1, 1, tzinfo=UTC), 366),
    }
    for phrase, (start, days) in simple.items():
        if re.search(rf"\b{phrase}\b", low):
            day = _safe(start)
            if day is None:
                return None
            if phrase == "last month":
                return _safe(_month_window, day.year, day.month, phrase)
            return _safe(_window, day, days, phrase)
    return _english_patterns(low, ref, today)


def _english_patterns(low: str, ref: datetime, today: datetime) -> TimeWindow | None:
    m = re.search(
        r"\b(\d+|a|an|one|two|three|four|five|six|few|couple of)\s+"
        r"(day|week|month|year)s?\s+ago\b",
        low,
    )
    if m:
        words = {
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
        n = int(m.group(1)) if m.group(1).isdigit() else words[m.group(1)]
        days = n * _UNITS[m.group(2)]
        slack = max(1, _UNITS[m.group(2)] // 2) if n > 0 else 1
        return _window(today - timedelta(days + slack), 2 * slack + 1, m.group(0))
    m = re.search(
        r"\b(last|next|this|on)\s+(monday|tuesday|wednesday|thursday|friday|"
        r"saturday|sunday)\b",
        low,
    )
    if m:
        return _weekday(today, WEEKDAYS[m.group(2)], m.group(1), m.group(0))
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
        return _month_window(year, MONTHS[m.group(1)[:3]], m.group(0).strip())
    m = re.search(r"\b(?:in|during|since)\s+((?:19|20)\d{2})\b", low)
    if m:
        year = int(m.group(1))
        return TimeWindow(
            datetime(year, 1, 1, tzinfo=UTC).timestamp(),
            datetime(year + 1, 1, 1, tzinfo=UTC).timestamp(),
            m.group(0),
        )
    return None


def _weekday(today: datetime, target: int, which: str, phrase: str) -> TimeWindow:
    monday = today - timedelta(today.weekday())
    offset = {"last": -7, "next": 7}.get(which, 0)
    day = monday + timedelta(offset + target)
    if which == "on" and day > today:
        day -= timedelta(7)
    return _window(day, 1, phrase)


def _chinese(text: str, ref: datetime) -> TimeWindow | None:
    today = _day_start(ref)
    simple: dict[str, tuple[Callable[[], datetime], int]] = {
        "今天": (lambda: today, 1),
        "昨天": (lambda: today - timedelta(1), 1),
        "前天": (lambda: today - timedelta(2), 1),
        "明天": (lambda: today + timedelta(1), 1),
        "后天": (lambda: today + timedelta(2), 1),
        "去年": (lambda: datetime(ref.year - 1, 1, 1, tzinfo=UTC), 365),
    }
    m = re.search(r"(上|下|这|本)(?:周|星期|个?礼拜)([一二三四五六日天])", text)
    if m:
        offset = {"上": -7, "下": 7}.get(m.group(1), 0)
        day = (
            today
            - timedelta(today.weekday())
            + timedelta(offset + _CN_WEEKDAY[m.group(2)])
        )
        return _window(day, 1, m.group(0))
    m = re.search(
        # Read from a number's first digit only, and whole (``++``): each
        # digit of a long run would otherwise rescan the run (quadratic).
        r"(?<![零一二两三四五六七八九十\d])([零一二两三四五六七八九十\d]++)\s*+"
        r"(个月|星期|天|日|周|年)(?:前|以前|之前)",
        text,
    )
    if m and (n := _cn_number(m.group(1))) is not None:
        days = n * _CN_UNITS[m.group(2)]
        slack = max(1, _CN_UNITS[m.group(2)] // 2)
        return _window(today - timedelta(days + slack), 2 * slack + 1, m.group(0))
    m = re.search(
        r"(?:(\d{4})年)?(\d{1,2}|[一二三四五六七八九十]{1,3})月(?![前份]?前)", text
    )
    if m and (month := _cn_number(m.group(2))) and 1 <= month <= 12:
        year = int(m.group(1)) if m.group(1) else ref.year
        return _month_window(year, month, m.group(0))
    for phrase, (start, days) in simple.items():
        if phrase in text:
            return _safe(_simple_window, start, days, phrase)
    m = re.search(r"(上|下|这|本)(?:周|星期|个?礼拜)", text)
    if m:
        offset = {"上": -7, "下": 7}.get(m.group(1), 0)
        return _window(today - timedelta(today.weekday() - offset), 7, m.group(0))
    if "上个月" in text:
        last = today.replace(day=1) - timedelta(1)
        return _month_window(last.year, last.month, "上个月")
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

    Returns:
        The window, or ``None`` when the text names no time, or names one
        outside the calendar (year 0, year 10000, ...), or ``ref`` itself is
        not a representable time.
    """
    ref_dt = _safe(to_dt, ref)
    if ref_dt is None:
        return None
    for parse in (_chinese, _english):
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
