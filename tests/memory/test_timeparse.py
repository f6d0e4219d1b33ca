"""Time expressions resolve to windows relative to a fixed reference time."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.memory.language.timeparse import check_event_time, find_window, to_dt

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


OUT_OF_RANGE = [
    "what did I do 99999999 days ago?",
    "december 9999",
    "9999年12月的事",
    "january 0000",
    "0000年1月",
    "99999999年前",
    "what happened " + "9" * 5000 + " years ago",
]


@pytest.mark.parametrize("text", OUT_OF_RANGE)
def test_phrases_past_the_calendar_are_not_windows(text: str) -> None:
    """A date before year 1 or after year 9999 is ignored, not raised."""
    assert find_window(text, REF) is None


@pytest.mark.parametrize(
    "ref",
    [
        datetime(1, 1, 1, tzinfo=UTC).timestamp(),
        datetime(9999, 12, 31, 23, tzinfo=UTC).timestamp(),
        float("inf"),
        float("nan"),
        -1e30,
    ],
)
@pytest.mark.parametrize("text", ["next year", "tomorrow", "last year", "去年", "明天"])
def test_references_at_the_calendar_ends_never_raise(ref: float, text: str) -> None:
    """Relative phrases at the first or last representable day give a window or None."""
    w = find_window(text, ref)
    assert w is None or w.start < w.end


def test_today_still_resolves_on_the_last_day_of_the_calendar() -> None:
    """Near year 9999 "today" resolves even though "next year" cannot."""
    ref = datetime(9999, 12, 31, 12, tzinfo=UTC).timestamp()
    w = find_window("what did I do today?", ref)
    assert w is not None and w.contains(ref)


@given(
    st.text(max_size=40)
    | st.from_regex(r"\d{1,12} (day|week|month|year)s? ago", fullmatch=True)
    | st.from_regex(r"(january|dec) \d{4}", fullmatch=True)
    | st.from_regex(r"\d{1,9}(年|个月|天)前|\d{4}年\d{1,2}月", fullmatch=True),
    st.floats(allow_nan=True, allow_infinity=True),
)
def test_any_phrase_at_any_reference_never_raises(text: str, ref: float) -> None:
    """Any text at any reference time gives an ordered window or None, never an error."""
    w = find_window(text, ref)
    assert w is None or w.start < w.end


@pytest.mark.parametrize("value", [0, 1_700_000_000, 1.5e9, -1e9])
def test_event_times_in_the_calendar_pass(value: float) -> None:
    """Event times between the years 1 and 9999 pass through as floats."""
    assert float(value) == check_event_time(value)


@pytest.mark.parametrize("value", [float("inf"), float("-inf"), float("nan"), 1e20])
def test_event_times_past_the_calendar_are_value_errors(value: float) -> None:
    """Infinite, NaN or far-future event times are a clear ValueError."""
    with pytest.raises(ValueError, match="event_time"):
        check_event_time(value)


@pytest.mark.parametrize("value", ["2024-01-01", True, None, datetime.now(UTC)])
def test_event_times_that_are_not_numbers_are_type_errors(value: object) -> None:
    """A string, bool, None or datetime as event_time is a TypeError naming the fix."""
    with pytest.raises(TypeError, match="timestamp"):
        check_event_time(value)
