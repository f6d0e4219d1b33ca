"""Chinese time phrases to windows: 上周三, 三天前, 去年冬天, 下个月十五号, 国庆.

Every pattern below is searched and the phrase that starts first wins, the
longest of those starting there: in 我们下周三用Redis做压测 it is 下周三, in
去年冬天 the season rather than the year, in 下个月十五号 the day rather than the
month. Only that phrase is resolved, so 二月三十号 is no window, not February.
The conventions are the English reader's (``timeparse``), so a question asked
in either language selects the same memories:

- a day is a day: 今天, 昨晚, 大前天; weeks start on Monday: 上周三 is
  Wednesday of last week ("last Wednesday"), a bare 周三 the latest Wednesday
  not after today ("on Wednesday"), a bare 周末 this week's Saturday and Sunday;
- a month without a year is the reference year's (五月 is "in May");
  月初/月中/月底 are its thirds (上旬 1-10, 中旬 11-20, 下旬 21 to the end);
- N天前, 三个月后: centred on the day N units away, about one unit wide
  (``timewindow.around``); 几 is three, like "a few";
- seasons are meteorological: 春 Mar-May, 夏 Jun-Aug, 秋 Sep-Nov, 冬 Dec-Feb,
  so 去年冬天 starts in December of last year. A season needs a year (今年夏天):
  a bare 夏天 means "summers" as often as "this summer";
- a holiday with a fixed date (元旦, 五一, 国庆, 圣诞) and no year is the next one
  when the sentence speaks of the future (要, 打算), the last one when it speaks
  of the past (了, 上次), else the nearest. Lunar ones (春节, 中秋) move every
  year and are not resolved: no window rather than a wrong one.

Lookarounds keep out words that only contain a time word: 晚上周会 and 马上
(上周, 上月), 上周一起 (周一), 一周三次 and 每周三 (周三), 这周围, 圣诞老人, 几天前天气
(前天). Each pattern reads in time linear in the text: a numeral is read from
its first digit only, and whole.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from hindsight_lg.memory.language.timewindow import (
    DAY,
    TimeWindow,
    around,
    day_start,
    days_window,
    month_window,
    shift_month,
    week_start,
    weekday_window,
    year_window,
)

_V = TypeVar("_V")


def _inverted(table: dict[_V, str]) -> dict[str, _V]:
    """``{value: "word word"}`` as ``{word: value}``: tables read by what words mean."""
    return {word: value for value, words in table.items() for word in words.split()}


_DIGITS = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_POWERS = {"十": 10, "百": 100, "千": 1000}
_NUMERAL = "〇零一二两三四五六七八九十百千"  # characters of a count: 两百零三
_SMALL = "一二三四五六七八九十"  # characters of a month or a day: 十二, 三十一
_YEAR_DIGIT = "〇零一二三四五六七八九"  # a year is said digit by digit: 二〇二三

# days from today -> the words for that day (昨晚 is yesterday, all of it)
_DAY_WORDS = _inverted(
    {
        -3: "大前天",
        -2: "前天",
        -1: "昨天 昨日 昨晚 昨夜 昨儿",
        0: "今天 今日 今早 今晨 今晚 今夜 今儿",
        1: "明天 明日 明早 明晚 明儿",
        2: "后天",
        3: "大后天",
    }
)
_YEAR_WORDS = _inverted(
    {-3: "大前年", -2: "前年", -1: "去年", 0: "今年", 1: "明年", 2: "后年", 3: "大后年"}
)
_MONTH_WORDS = _inverted(
    {
        -2: "上上个月",
        -1: "上个月 上月",
        0: "这个月 这月 本月",
        1: "下个月 下月",
        2: "下下个月",
    }
)
_WEEK_WORDS = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
_WEEKDAYS = {c: i for i, c in enumerate("一二三四五六日")} | {"天": 6}
_UNITS = _inverted({1: "天 日", 7: "周 星期 礼拜", 30: "月", 365: "年"})
# the thirds of a month: 上旬 (1-10), 中旬 (11-20), 下旬 (21 to the end)
_THIRDS = _inverted({0: "上旬 初", 1: "中旬 中", 2: "下旬 底 末"})
_SEASONS = {"春": 3, "夏": 6, "秋": 9, "冬": 12}  # the month each starts
# (month, day, days) -> names: fixed dates only, lunar holidays are left out.
_HOLIDAYS = _inverted(
    {
        (1, 1, 1): "元旦",
        (2, 14, 1): "情人节",
        (5, 1, 5): "五一 劳动节",
        (10, 1, 7): "国庆 国庆节",
        (12, 24, 1): "平安夜",
        (12, 25, 1): "圣诞 圣诞节",
    }
)
# Which holiday a sentence without a year means: it speaks of the future or
# the past. Future first: 快到国庆了 is ahead despite its 了.
_FUTURE = re.compile("要|将|打算|准备|计划|下次|下个|快到|即将|等到|还没")
_PAST = re.compile("了|上次|上个|当时|那时|去过")


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


# Characters that end a word with 上/下 in it (晚上, 马上, 一下, 网上), so the
# 上/下 after them is not "last"/"next": 晚上周会 is no 上周.
_NOT_DIRECTION = "晚早马路身网楼线手桌街墙头台世天加一往向"
# After a weekday digit: 上周一起 is "together last week", 一周三次 "three times
# a week", 上周三天 "three days last week".
_NOT_WEEKDAY = "起共直样些切定般致同次个遍趟回天"
# Before a day or year word: 以后天天 (every day from now on), 然后天黑了,
# 几天前天气, 目前, 提前天数, 以后年薪; 过去年 for 去年.
_NOT_DAY = "天年以之然最提目眼面"
_NOT_YEAR = "年过以之然最目"
# After 周 itself: 这周围 (around here), 周到, 周期, 周年, 周边.
_NOT_WEEK = "围到全期年岁边"
_YEAR = (
    rf"(?:(?P<ydigits>(?<!\d)\d{{4}}|(?<![{_YEAR_DIGIT}])[{_YEAR_DIGIT}]{{4}})年"
    rf"|(?<![{_NOT_YEAR}])(?P<yrel>{_alternatives(_YEAR_WORDS)})(?![轻纪龄级]))"
)
_PART_OF_MONTH = (
    rf"(?:(?P<day>\d{{1,2}}|[{_SMALL}]{{1,3}})[号日]"
    rf"|(?P<third>上旬|中旬|下旬|初|中(?![国文心间午])|底|末))"
)
_WEEKDAY = (
    rf"(?P<weekday>[一二三四五六日](?![{_NOT_WEEKDAY}])"
    rf"|(?<!周)天(?![{_NOT_WEEKDAY}])|(?<=周)末)"
)
_AGO = re.compile(
    rf"(?<![{_NUMERAL}\d])(?P<n>[{_NUMERAL}\d]++|几)\s*+"
    r"(?P<unit>个月|个?(?:星期|礼拜|周)|天|日|年)(?P<way>[以之]?[前后])"
)
_HOLIDAY = re.compile(
    rf"(?:{_YEAR}的?)?(?<![{_NUMERAL}\d第])"
    rf"(?P<holiday>{_alternatives(_HOLIDAYS)})(?!老人|树|帽|卡|[个次])"
)
_SEASON = re.compile(rf"{_YEAR}的?(?P<season>[春夏秋冬])[天季]")
_DATE = re.compile(
    rf"(?:{_YEAR}的?)?(?<![{_NUMERAL}\d])(?P<month>\d{{1,2}}|[{_SMALL}]{{1,3}})"
    rf"月份?+(?![以之]?[前后])(?:{_PART_OF_MONTH})?"
)
_MONTH = re.compile(
    rf"(?<![{_NOT_DIRECTION}])(?P<mrel>{_alternatives(_MONTH_WORDS)})"
    rf"(?:{_PART_OF_MONTH})?"
)
_WEEK = re.compile(
    rf"(?<![{_NOT_DIRECTION}])(?P<way>上上|下下|上|下|这|本)个?"
    rf"(?:周|星期|礼拜)(?![{_NOT_WEEK}])(?:{_WEEKDAY})?"
)
_BARE_WEEKDAY = re.compile(
    rf"(?<![{_NUMERAL}\d每几上下这本个第])(?:周|星期|礼拜){_WEEKDAY}"
)
_DAY = re.compile(rf"(?<![{_NOT_DAY}])(?P<word>{_alternatives(_DAY_WORDS)})")
_YEAR_ONLY = re.compile(_YEAR)
# Every phrase above has a Chinese character: English text skips the searches.
_HAN = re.compile("[\u3007\u4e00-\u9fff]")

_Resolve = Callable[[re.Match[str], datetime], TimeWindow | None]


def number(text: str) -> int | None:
    """A count in Arabic or Chinese numerals ("15", "十五", "两百零三"), else ``None``.

    Chinese counts are read as said, up to the thousands: a digit multiplies
    the power after it (三百), 零 holds a skipped place (一百零五), a leading
    十 is ten (十五). Two digits in a row (三三, 二〇) are no count.
    """
    if text.isdecimal():
        return int(text)
    total, digit, power = 0, None, 10_000
    for char in text:
        if char in _POWERS and _POWERS[char] < power:
            power = _POWERS[char]
            total += power * (1 if digit is None else digit)
            digit = None
        elif char in _DIGITS and not digit:  # only 零 may come before a digit
            digit = _DIGITS[char]
        else:
            return None
    return total + (digit or 0)


def _year(m: re.Match[str], today: datetime) -> int:
    """The year a match names (2023年, 二〇二三年, 去年), else today's."""
    if digits := m["ydigits"]:
        if digits.isdecimal():
            return int(digits)
        return int("".join(str(_DIGITS[d]) for d in digits))
    if m["yrel"]:
        return today.year + _YEAR_WORDS[m["yrel"]]
    return today.year


def _ago(m: re.Match[str], today: datetime) -> TimeWindow | None:
    n = 3 if m["n"] == "几" else number(m["n"])
    unit = _UNITS[m["unit"].removeprefix("个")]
    if n is None or (unit == 365 and n >= 1000):
        return None  # 2020年前 is "before 2020", not two thousand years back
    sign = -1 if m["way"].endswith("前") else 1
    return around(today, sign * n * unit, unit if n else 1, m[0])


def _holiday(m: re.Match[str], today: datetime) -> TimeWindow | None:
    month, day, days = _HOLIDAYS[m["holiday"]]

    def on(year: int) -> TimeWindow:
        return days_window(datetime(year, month, day, tzinfo=UTC), days, m[0])

    if m["ydigits"] or m["yrel"]:
        return on(_year(m, today))
    years = [on(today.year + offset) for offset in (-1, 0, 1)]
    return _nearest(years, today.timestamp(), _tense(m.string))


def _tense(text: str) -> int:
    """1 when ``text`` speaks of the future, -1 of the past, else 0."""
    if _FUTURE.search(text):
        return 1
    return -1 if _PAST.search(text) else 0


def _nearest(windows: list[TimeWindow], now: float, tense: int) -> TimeWindow:
    """Of yearly ``windows`` (in order): the next, the last or the nearest to ``now``."""
    if tense > 0:
        return next(w for w in windows if w.end > now)
    if tense < 0:
        return [w for w in windows if w.start <= now][-1]
    # Seconds from today to the window: 0 inside it, a day for yesterday's end.
    return min(windows, key=lambda w: max(w.start - now, now - w.end + DAY, 0))


def _season(m: re.Match[str], today: datetime) -> TimeWindow | None:
    return month_window(_year(m, today), _SEASONS[m["season"]], m[0], months=3)


def _date(m: re.Match[str], today: datetime) -> TimeWindow | None:
    month = number(m["month"])
    if month is None or not 1 <= month <= 12:
        return None
    return _in_month(_year(m, today), month, m)


def _month(m: re.Match[str], today: datetime) -> TimeWindow | None:
    year, month = shift_month(today.year, today.month, _MONTH_WORDS[m["mrel"]])
    return _in_month(year, month, m)


def _in_month(year: int, month: int, m: re.Match[str]) -> TimeWindow | None:
    """The month, or the day (十五号) or the third (月底) of it the match names."""
    whole = month_window(year, month, m[0])
    if m["third"]:
        third = _THIRDS[m["third"]]
        start = whole.start + 10 * third * DAY
        return TimeWindow(start, whole.end if third == 2 else start + 10 * DAY, m[0])
    if not m["day"]:
        return whole
    day = number(m["day"])
    if day is None or not 1 <= day <= calendar.monthrange(year, month)[1]:
        return None  # 二月三十号
    return days_window(datetime(year, month, day, tzinfo=UTC), 1, m[0])


def _week(m: re.Match[str], today: datetime) -> TimeWindow | None:
    weeks = _WEEK_WORDS[m["way"]]
    if m["weekday"] is None:
        return days_window(week_start(today, weeks), 7, m[0])
    if m["weekday"] == "末":
        return days_window(week_start(today, weeks) + timedelta(5), 2, m[0])
    return weekday_window(today, _WEEKDAYS[m["weekday"]], weeks, m[0])


def _bare_weekday(m: re.Match[str], today: datetime) -> TimeWindow | None:
    """周三 is the latest Wednesday not after today, 周末 this week's."""
    if m["weekday"] == "末":
        return days_window(week_start(today) + timedelta(5), 2, m[0])
    return weekday_window(today, _WEEKDAYS[m["weekday"]], 0, m[0], latest=True)


def _day(m: re.Match[str], today: datetime) -> TimeWindow | None:
    return days_window(today + timedelta(_DAY_WORDS[m["word"]]), 1, m[0])


def _year_only(m: re.Match[str], today: datetime) -> TimeWindow | None:
    year = _year(m, today)
    if m["ydigits"] and not 1900 <= year < 2100:
        return None  # 活了3000年 is a span, not the year 3000
    return year_window(year, m[0])


# Most specific first: of two phrases with the same span, the first here wins.
_READERS: tuple[tuple[re.Pattern[str], _Resolve], ...] = (
    (_AGO, _ago),
    (_HOLIDAY, _holiday),
    (_SEASON, _season),
    (_DATE, _date),
    (_MONTH, _month),
    (_WEEK, _week),
    (_BARE_WEEKDAY, _bare_weekday),
    (_DAY, _day),
    (_YEAR_ONLY, _year_only),
)


def chinese_window(text: str, ref: datetime) -> TimeWindow | None:
    """The first Chinese time phrase in ``text``, resolved against ``ref`` (UTC).

    Returns:
        The window, or ``None`` when no phrase is found or the first one
        names no date (二月三十号, 13月).

    Raises:
        ValueError, OverflowError: the date is past the calendar's ends
        (year 0, year 10000); ``timeparse.find_window`` reads that as ``None``.
    """
    if not _HAN.search(text):
        return None
    found = [(m, read) for pattern, read in _READERS if (m := pattern.search(text))]
    if not found:
        return None
    m, read = min(found, key=lambda f: (f[0].start(), -f[0].end()))
    return read(m, day_start(ref))
