"""Chinese time phrases resolve like their English twins, in capture and in recall."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.language.timeparse import find_window, to_dt
from hindsight_lg.memory.language.timeparse_zh import number
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

# Wednesday 14 June 2023, 15:30 UTC (as in test_timeparse).
REF = datetime(2023, 6, 14, 15, 30, tzinfo=UTC).timestamp()
DAY = 86400.0


def start_and_width(text: str) -> tuple[str, float]:
    window = find_window(text, REF)
    assert window is not None, text
    return to_dt(window.start).date().isoformat(), (window.end - window.start) / DAY


DAYS = [
    ("今天", ("2023-06-14", 1)),
    ("昨天", ("2023-06-13", 1)),
    ("前天", ("2023-06-12", 1)),
    ("大前天", ("2023-06-11", 1)),
    ("明天", ("2023-06-15", 1)),
    ("后天", ("2023-06-16", 1)),
    ("大后天", ("2023-06-17", 1)),
    ("今早开了个会", ("2023-06-14", 1)),
    ("昨晚", ("2023-06-13", 1)),
    ("昨天晚上", ("2023-06-13", 1)),
    # "N days ago" is the English window: the day, with a day each side.
    ("三天前", ("2023-06-10", 3)),
    ("3天后", ("2023-06-16", 3)),
    ("3天以后", ("2023-06-16", 3)),
    ("十五天前", ("2023-05-29", 3)),
    ("两天后", ("2023-06-15", 3)),
    ("几天前", ("2023-06-10", 3)),
]
WEEKS = [
    ("上周", ("2023-06-05", 7)),
    ("上星期", ("2023-06-05", 7)),
    ("上个礼拜", ("2023-06-05", 7)),
    ("这周", ("2023-06-12", 7)),
    ("本周", ("2023-06-12", 7)),
    ("下周", ("2023-06-19", 7)),
    ("上上周", ("2023-05-29", 7)),
    ("下下周", ("2023-06-26", 7)),
    ("上周三", ("2023-06-07", 1)),
    ("下周五", ("2023-06-23", 1)),
    ("这周日", ("2023-06-18", 1)),
    ("上星期天", ("2023-06-11", 1)),
    ("周五", ("2023-06-09", 1)),
    ("周末", ("2023-06-17", 2)),
    ("上周末", ("2023-06-10", 2)),
    ("下周末", ("2023-06-24", 2)),
    ("两周前", ("2023-05-28", 7)),
    ("三个星期前", ("2023-05-21", 7)),
]
MONTHS = [
    ("上个月", ("2023-05-01", 31)),
    ("上月", ("2023-05-01", 31)),
    ("这个月", ("2023-06-01", 30)),
    ("本月", ("2023-06-01", 30)),
    ("下个月", ("2023-07-01", 31)),
    ("上上个月", ("2023-04-01", 30)),
    ("下个月十五号", ("2023-07-15", 1)),
    ("上个月3号", ("2023-05-03", 1)),
    ("这个月底", ("2023-06-21", 10)),
    ("上个月初", ("2023-05-01", 10)),
    ("下个月中", ("2023-07-11", 10)),
    ("三月", ("2023-03-01", 31)),
    ("三月初", ("2023-03-01", 10)),
    ("五月下旬", ("2023-05-21", 11)),
    ("3月5日", ("2023-03-05", 1)),
    ("三月五号", ("2023-03-05", 1)),
    ("五月三十一号", ("2023-05-31", 1)),
    ("2023年5月", ("2023-05-01", 31)),
    ("2023年5月4日", ("2023-05-04", 1)),
    ("二〇二三年五月", ("2023-05-01", 31)),
    ("去年十二月", ("2022-12-01", 31)),
    ("两个月前", ("2023-03-31", 31)),
    ("3个月后", ("2023-08-28", 31)),
]
YEARS_AND_SEASONS = [
    ("今年", ("2023-01-01", 365)),
    ("去年", ("2022-01-01", 365)),
    ("前年", ("2021-01-01", 365)),
    ("明年", ("2024-01-01", 366)),
    ("后年", ("2025-01-01", 365)),
    ("2021年", ("2021-01-01", 365)),
    ("五年前", ("2017-12-15", 365)),
    ("去年冬天", ("2022-12-01", 90)),
    ("今年夏天", ("2023-06-01", 92)),
    ("明年春天", ("2024-03-01", 92)),
    ("2022年秋天", ("2022-09-01", 91)),
]
HOLIDAYS = [
    # Without a year: the next when the sentence looks ahead, the last when
    # it looks back, else the nearest (in June: last New Year, next October).
    ("元旦", ("2023-01-01", 1)),
    ("国庆", ("2023-10-01", 7)),
    ("国庆节我们去了杭州", ("2022-10-01", 7)),
    ("去年国庆", ("2022-10-01", 7)),
    ("明年元旦", ("2024-01-01", 1)),
    ("圣诞要去滑雪", ("2023-12-25", 1)),
    ("五一我们去了杭州", ("2023-05-01", 5)),
    ("劳动节", ("2023-05-01", 5)),
]
MIXED = [
    ("我们下周三用Redis做压测", ("2023-06-21", 1)),
    ("meeting 下周五", ("2023-06-23", 1)),
    ("我昨天晚上在上海吃了火锅，很好吃😋", ("2023-06-13", 1)),
    ("下个月二十三号要交季度报告，别忘了", ("2023-07-23", 1)),
    ("上周一起吃饭的那家店关门了", ("2023-06-05", 7)),  # 一起 is no Monday
    ("The deploy 3天前 broke prod", ("2023-06-10", 3)),
]


@pytest.mark.parametrize(
    ("text", "expected"), DAYS + WEEKS + MONTHS + YEARS_AND_SEASONS + HOLIDAYS + MIXED
)
def test_phrases_resolve_to_a_window_of_their_width(
    text: str, expected: tuple[str, int]
) -> None:
    """Each phrase gives the window starting on the expected day, of its width."""
    assert expected == start_and_width(text)


@pytest.mark.parametrize(
    ("chinese", "english"),
    [
        ("今天", "today"),
        ("昨天", "yesterday"),
        ("明天", "tomorrow"),
        ("上周", "last week"),
        ("这周", "this week"),
        ("下周", "next week"),
        ("上周末", "last weekend"),
        ("上周五", "last Friday"),
        ("下周五", "next Friday"),
        ("这周日", "this Sunday"),
        ("周五", "on Friday"),
        ("周三", "on Wednesday"),
        ("上个月", "last month"),
        ("去年", "last year"),
        ("今年", "this year"),
        ("明年", "next year"),
        ("3天前", "3 days ago"),
        ("几天前", "a few days ago"),
        ("两周前", "two weeks ago"),
        ("三个月前", "three months ago"),
        ("一年前", "a year ago"),
        ("五月", "in May"),
        ("十二月", "in December"),
        ("2022年5月", "May 2022"),
        ("2021年", "in 2021"),
    ],
)
def test_chinese_and_english_twins_give_the_same_window(
    chinese: str, english: str
) -> None:
    """A phrase and its English twin select the same days."""
    zh, en = find_window(chinese, REF), find_window(english, REF)
    assert zh is not None and en is not None
    assert (en.start, en.end) == (zh.start, zh.end)


@pytest.mark.parametrize(
    "text",
    [
        "春节",  # lunar: moves every year
        "中秋节我们一起吃了月饼",
        "二月三十号",
        "六月三十一号",
        "13月",
        "2023年13月",
        "一周三次",  # three times a week
        "每周三开会",  # every Wednesday
        "早上周会上说的",  # this morning's weekly meeting
        "这周围很安静",  # around here
        "圣诞老人",
        "以后天天锻炼",
        "然后天黑了",
        "十五",
        "两个",
        "活了3000年",
        "2020年前",  # before 2020, not two thousand years back
    ],
)
def test_no_date_or_a_wrong_one_gives_none(text: str) -> None:
    """Impossible dates, lunar holidays and words that contain a time word are no window."""
    assert find_window(text, REF) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("十五", 15), ("二十三", 23), ("两", 2), ("三十一", 31), ("一百零五", 105)]
    + [("两百", 200), ("三百六十五", 365), ("15", 15), ("三三", None), ("二〇", None)],
)
def test_numerals_are_read_as_said(text: str, expected: int | None) -> None:
    """Chinese counts read up to the thousands; digit runs are no count."""
    assert expected == number(text)


# -- property tests: generated phrases --------------------------------------

_DIGITS = "零一二三四五六七八九"


def chinese_numeral(n: int, two: str = "二") -> str:
    """How a count from 1 to 999 is said: 十五, 二十三, 一百零五, 两百."""
    hundreds, tens, ones = n // 100, n // 10 % 10, n % 10
    said = _DIGITS[hundreds] + "百" if hundreds else ""
    if tens:
        said += ("" if tens == 1 and not hundreds else _DIGITS[tens]) + "十"
    elif hundreds and ones:
        said += "零"
    said += _DIGITS[ones] if ones else ""
    if n == 2 or hundreds == 2:
        said = two + said[1:]
    return said


counts = st.builds(
    chinese_numeral, st.integers(1, 999), st.sampled_from(["二", "两"])
) | st.integers(0, 99999).map(str)
PIECES = (
    "上 下 这 本 上上 下下 上个 下个 这个 去 今 明 前 后 大前 大后 每 几 第 "
    "天 日 周 星期 礼拜 个星期 个月 月 月份 年 号 的 初 中 底 末 上旬 下旬 "
    "一 二 三 四 五 六 日 天 末 春 夏 秋 冬 季 "
    "前 后 以前 以后 之前 之后 元旦 国庆 国庆节 圣诞 五一 劳动节 春节 中秋 "
    "2023年 二〇二三年 0000年 9999年 13月 三十二号 二月三十号 "
    "了 要 打算 我们 用Redis 做压测 meeting 😋 ， 。 "
).split()
neutral = st.text(alphabet="我们用做压测吃饭好 abcXYZ,.!😋🎉", max_size=8)
phrases = st.lists(
    st.sampled_from(PIECES) | counts | st.text(max_size=3), max_size=10
).map("".join)
refs = st.datetimes(
    min_value=datetime(1900, 1, 1),
    max_value=datetime(2100, 1, 1),
    timezones=st.just(UTC),
)


@settings(max_examples=300, deadline=None)
@given(st.tuples(neutral, phrases, neutral).map("".join), refs)
def test_generated_phrases_never_raise_and_windows_are_ordered(
    text: str, ref: datetime
) -> None:
    """Any mix of time words, numerals and other text gives None or an ordered window."""
    window = find_window(text, ref.timestamp())
    assert window is None or window.start < window.end


UNIT_DAYS = {"天": 1, "周": 7, "个星期": 7, "个礼拜": 7, "个月": 30, "年": 365}


@settings(max_examples=300, deadline=None)
@given(
    st.integers(1, 400),
    st.booleans(),
    st.sampled_from(sorted(UNIT_DAYS)),
    st.sampled_from(["前", "以前", "之前", "后", "以后", "之后"]),
    neutral,
    neutral,
    refs,
)
def test_n_units_ago_contains_the_moment_n_units_back(
    n: int,
    arabic: bool,
    unit: str,
    way: str,
    before: str,
    after: str,
    ref: datetime,
) -> None:
    """ "N天前" (and weeks, months, years, later) holds ref minus (plus) N units."""
    said = str(n) if arabic else chinese_numeral(n)
    window = find_window(f"{before}{said}{unit}{way}{after}", ref.timestamp())
    sign = -1 if way.endswith("前") else 1
    moment = ref + timedelta(days=sign * n * UNIT_DAYS[unit])
    assert window is not None and window.contains(moment.timestamp())


# -- through the public API -------------------------------------------------


def test_capture_keeps_the_day_a_chinese_memory_mentions() -> None:
    """A memory that says 上周三 records last Wednesday as the time it mentions."""
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=FrozenClock(REF)
    )
    [record] = memory.capture("上周三我们用Redis做了压测", namespace="u")
    wednesday = datetime(2023, 6, 7, tzinfo=UTC).timestamp()
    assert (REF, wednesday) == (record.event_time, record.mentioned_time)


def test_recall_of_last_month_in_chinese_selects_last_months_memory() -> None:
    """ "上个月" favours what happened last month over a closer text match from today."""
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=FrozenClock(REF)
    )
    may = datetime(2023, 5, 12, tzinfo=UTC).timestamp()
    [in_may] = memory.capture("和Anna一起去上了陶艺课", namespace="u", event_time=may)
    [today] = memory.capture("和Anna一起去上了陶艺课，又玩得很开心", namespace="u")
    result = memory.recall(
        "上个月我做了什么？", namespace="u", explain=True, timeout=None
    )
    assert result.ids[0] == in_may.id
    assert result.explanation is not None
    assert (
        result.memories[0].paths["time"] == 1.0
        and "time" not in result.explanation[today.id]
    )
