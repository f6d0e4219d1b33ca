"""Time expressions resolve to windows relative to a fixed reference time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.memory.timeparse import find_window, to_dt

# Wednesday 14 June 2023, 15:30 UTC.
REF = datetime(2023, 6, 14, 15, 30, tzinfo=UTC).timestamp()


def days(text: str) -> tuple[str, str]:
    window = find_window(text, REF)
    assert window is not None, text
    return (
        to_dt(window.start).date().isoformat(),
        to_dt(window.end).date().isoformat(),
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what did I do last week?", ("2023-06-05", "2023-06-12")),
        ("we met in May 2023", ("2023-05-01", "2023-06-01")),
        ("in May", ("2023-05-01", "2023-06-01")),
        ("yesterday was fun", ("2023-06-13", "2023-06-14")),
        ("tomorrow", ("2023-06-15", "2023-06-16")),
        ("2 days ago", ("2023-06-11", "2023-06-14")),
        ("last Friday", ("2023-06-09", "2023-06-10")),
        ("last month", ("2023-05-01", "2023-06-01")),
        ("in 2021", ("2021-01-01", "2022-01-01")),
        ("上周三我去了北京", ("2023-06-07", "2023-06-08")),
        ("下周三要去上海出差", ("2023-06-21", "2023-06-22")),
        ("昨天", ("2023-06-13", "2023-06-14")),
        ("去年", ("2022-01-01", "2023-01-01")),
        ("2022年5月", ("2022-05-01", "2022-06-01")),
        ("上个月", ("2023-05-01", "2023-06-01")),
    ],
)
def test_expressions_resolve_against_the_reference(
    text: str, expected: tuple[str, str]
) -> None:
    """Each expression gives the expected half-open window of days."""
    assert expected == days(text)


@pytest.mark.parametrize(
    ("text", "ago_days", "width_days"),
    [
        ("three weeks ago", 21, 7),
        ("a year ago", 365, 365),
        ("三个月前搬家了", 90, 31),
        ("两周前", 14, 7),
    ],
)
def test_ago_is_a_window_around_that_day(
    text: str, ago_days: int, width_days: int
) -> None:
    """ "N units ago" is centred on the day N units back, about one unit wide."""
    w = find_window(text, REF)
    assert w is not None
    day = datetime(2023, 6, 14, tzinfo=UTC).timestamp() - ago_days * 86400.0
    assert w.contains(day + 43200.0)
    assert width_days == round((w.end - w.start) / 86400.0)


def test_window_contains_its_start_not_its_end() -> None:
    """Windows are half-open."""
    w = find_window("yesterday", REF)
    assert w is not None
    assert (True, False) == (w.contains(w.start), w.contains(w.end))
    assert w.start < w.center < w.end


@pytest.mark.parametrize("text", ["I like tea", "may I ask something?", "", "五"])
def test_no_expression_gives_none(text: str) -> None:
    """Text without a time expression gives no window (modal "may" is not May)."""
    assert find_window(text, REF) is None


@given(st.text(max_size=60))
def test_never_raises_and_windows_are_ordered(text: str) -> None:
    """Any text parses without error; a window found has start < end."""
    w = find_window(text, REF)
    assert w is None or w.start < w.end
