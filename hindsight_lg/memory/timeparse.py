"""Resolve time expressions ("last week", "in May 2023", "上周三", "三个月前") to windows.

Windows are relative to a reference time: the query's time at recall, the
event's time at capture. Only expressions found in the text are resolved;
anything else gives ``None`` so the caller searches without a time filter.

Example:
    >>> from datetime import datetime, UTC
    >>> ref = datetime(2023, 6, 14, tzinfo=UTC).timestamp()
    >>> w = find_window("what did I do last week?", ref)
    >>> (to_dt(w.start).date().isoformat(), to_dt(w.end).date().isoformat())
    ('2023-06-05', '2023-06-12')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

_DAY = 86400.0
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
    simple = {
        "today": (today, 1),
        "tonight": (today, 1),
        "yesterday": (today - timedelta(1), 1),
        "tomorrow": (today + timedelta(1), 1),
        "last week": (today - timedelta(today.weekday() + 7), 7),
        "this week": (today - timedelta(today.weekday()), 7),
        "next week": (today + timedelta(7 - today.weekday()), 7),
        "last weekend": (today - timedelta(today.weekday() + 2), 2),
        "last month": (today.replace(day=1) - timedelta(1), 0),
        "last year": (datetime(ref.year - 1, 1, 1, tzinfo=UTC), 365),
        "this year": (datetime(ref.year, 1, 1, tzinfo=UTC), 366),
        "next year": (datetime(ref.year + 1, 1, 1, tzinfo=UTC), 366),
    }
    for phrase, (start, days) in simple.items():
        if re.search(rf"\b{phrase}\b", low):
            if phrase == "last month":
                return _month_window(start.year, start.month, phrase)
            return _window(start, days, phrase)
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
    simple = {
        "今天": (today, 1),
        "昨天": (today - timedelta(1), 1),
        "前天": (today - timedelta(2), 1),
        "明天": (today + timedelta(1), 1),
        "后天": (today + timedelta(2), 1),
        "去年": (datetime(ref.year - 1, 1, 1, tzinfo=UTC), 365),
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
        r"([零一二两三四五六七八九十\d]+)\s*(个月|星期|天|日|周|年)(?:前|以前|之前)",
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
            return _window(start, days, phrase)
    m = re.search(r"(上|下|这|本)(?:周|星期|个?礼拜)", text)
    if m:
        offset = {"上": -7, "下": 7}.get(m.group(1), 0)
        return _window(today - timedelta(today.weekday() - offset), 7, m.group(0))
    if "上个月" in text:
        last = today.replace(day=1) - timedelta(1)
        return _month_window(last.year, last.month, "上个月")
    return None


def find_window(text: str, ref: float) -> TimeWindow | None:
    """The first time expression in ``text`` resolved against ``ref`` (POSIX seconds)."""
    ref_dt = to_dt(ref)
    return _chinese(text, ref_dt) or _english(text, ref_dt)
