"""Time windows and the calendar arithmetic both phrase readers share.

``timeparse`` reads English phrases and ``timeparse_zh`` Chinese ones; both
build their windows here, so "last week" and 上周, "three days ago" and 三天前
are one window by construction rather than two copies that happen to agree.
Everything is UTC and whole days: a day starts at midnight UTC, a week on
Monday, a month on its first. A date past the calendar's ends (year 0, year
10000) raises ``ValueError`` or ``OverflowError`` from ``datetime``; the
readers' caller turns that into "no window".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

DAY = 86400.0


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


def day_start(dt: datetime) -> datetime:
    """Midnight starting ``dt``'s day."""
    return dt.replace(hour=0, minute=0, second=0, microsecond=0)


def days_window(start: datetime, days: float, phrase: str) -> TimeWindow:
    """``days`` days from ``start``."""
    begin = start.timestamp()
    return TimeWindow(begin, begin + days * DAY, phrase)


def shift_month(year: int, month: int, months: int) -> tuple[int, int]:
    """(year, month) ``months`` months after (or before, when negative) the given one."""
    index = year * 12 + month - 1 + months
    return index // 12, index % 12 + 1


def month_window(year: int, month: int, phrase: str, months: int = 1) -> TimeWindow:
    """``months`` calendar months from the first of ``month`` (a season is three)."""
    end_year, end_month = shift_month(year, month, months)
    return TimeWindow(
        datetime(year, month, 1, tzinfo=UTC).timestamp(),
        datetime(end_year, end_month, 1, tzinfo=UTC).timestamp(),
        phrase,
    )


def year_window(year: int, phrase: str) -> TimeWindow:
    """The calendar year: 365 or 366 days."""
    return month_window(year, 1, phrase, months=12)


def week_start(today: datetime, weeks: int = 0) -> datetime:
    """Monday of the week ``weeks`` weeks from today's (-1: last week's)."""
    return today - timedelta(today.weekday() - 7 * weeks)


def weekday_window(
    today: datetime, weekday: int, weeks: int, phrase: str, *, latest: bool = False
) -> TimeWindow:
    """Day ``weekday`` (0 is Monday) of the week ``weeks`` weeks from today's.

    With ``latest``, the latest such day not after today: a weekday said
    without "last" or "next" ("on Friday", 周五) is taken as past.
    """
    day = week_start(today, weeks) + timedelta(weekday)
    if latest and day > today:
        day -= timedelta(7)
    return days_window(day, 1, phrase)


def around(
    today: datetime, offset_days: int, unit_days: int, phrase: str
) -> TimeWindow:
    """ "N units ago" (or later): centred on the day ``offset_days`` away.

    The window is about one unit wide, since "three weeks ago" is vague to
    about a week: half a unit of slack on each side, at least a day ("two days
    ago" is three days, 3 个月前 a month).
    """
    slack = max(1, unit_days // 2)
    return days_window(today + timedelta(offset_days - slack), 2 * slack + 1, phrase)
