"""Who a statement is about, which attribute it sets, and to what (English + Chinese).

"I take the 7:40 train", "These days I cycle to the office instead" and
"我每天坐地铁上班" all set one slot: the user's *commute*. Reading a statement
as ``(subject, attribute, value)`` is what lets a change of mind replace the
earlier statement whatever words, language or kind either used
(:mod:`.judge` decides). A statement that sets no slot this module knows has
no reading (``None``) and is never superseded by one.

The patterns are keyword tables a reader can check, like the rest of the
encoder: one table per language, ordered so the most specific pattern wins.
Values are normalised (:func:`value_key`) so "the 7:40 train" and "trains"
compare equal, and "骑车" is "bike" in either language.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

from hindsight_lg.memory.language.cues import cues, denies
from hindsight_lg.memory.language.frames import Change, split_change
from hindsight_lg.memory.language.lexicon import (
    MANY,
    SINGLE_VALUED,
    canonical,
    category_of,
    relation_key,
)
from hindsight_lg.memory.language.slot_tables import EN, EN_REL, ZH, ZH_REL

_EN_SUBJECT = re.compile(
    rf"\b(?:my|our)\s+(?:older |younger |little |big |twin |best )?(?P<rel>{EN_REL})"
    r"(?:'s)?\b(?:\s+(?P<name>(?-i:[A-Z][a-z]+)))?",
    re.I,
)
_ZH_SUBJECT = re.compile(rf"我的?(?P<rel>{ZH_REL})")
_NAME_START = re.compile(r"^(?:so |and |but |well |oh |also )?(?P<name>[A-Z][a-z]+)\b")
_NOT_SUBJECT_NAMES = frozenset(
    "i i'm i've i'll i'd the a an and but so also then yes no ok okay my we you it "
    "this that what when where why how hey hi hello oh well actually thanks please "
    "maybe sure wow these nowadays now lately recently today sorry correction wait "
    "since from after starting as if honestly".split()
)
_CUT_EN = re.compile(
    r"\s+(?:and|but|because|since|so|when|while|which|who|every|each|most|on|at|"
    r"in|for|with|from|to|these days|nowadays|now|again|instead|anymore|any more|"
    r"too|as well|these|this|last|next|since|before|after|by|than|rather|over|"
    r"though|lately|recently|all|these|then|or|via|i|if|years|months|weeks|ago|"
    r"yesterday|today|tonight)\b.*$",
    re.I,
)


THIRD_PERSON = "*"
# The attribute of "I gave up chocolate" or "I switched from Python to Rust"
# when no table says what the value is: it matches an earlier statement of
# any attribute by value (:mod:`.judge`).
ANY = "any"
_LEAD_EN = re.compile(
    r"^(?:(?:a lot of|lots of|plenty of|a|an|the|my|some|good|nice|great|cup of|"
    r"cups of|more|actually|"
    r"honestly|well|so|but|and|now|these days|nowadays|oh|also|still|really)\s+)+"
)


@dataclass(frozen=True, slots=True)
class Reading:
    """One statement read as subject, attribute and value, with how it is said.

    ``negated`` says the statement denies the value ("I no longer take the
    train", "我不喝咖啡了"); ``polarity`` is the opinion for ``likes``
    (``-1`` for "I hate X"). The cues say how the statement relates to what
    was said before: ``change`` ("these days", "instead", "搬到"), ``correction``
    ("sorry, I meant", "说错了"), ``addition`` ("also", "也"), ``hypothetical``
    ("if", "might", "如果", "考虑") and ``question``. ``previous`` is the old
    value the statement names as given up, as said ("green tea" in "I've
    switched from green tea to black coffee"), and ``switched`` says it
    adopts its value in place of another ("switched to", "instead of", "改喝").
    """

    subject: str
    attribute: str
    value: str
    negated: bool = False
    change: bool = False
    correction: bool = False
    addition: bool = False
    hypothetical: bool = False
    question: bool = False
    raw_value: str = ""
    previous: str = ""
    switched: bool = False

    @property
    def slot(self) -> str:
        """``subject/attribute`` (the key a change of mind is matched on)."""
        return f"{self.subject}/{self.attribute}"

    @property
    def single_valued(self) -> bool:
        """One value at a time: a new one replaces the old (where one lives).

        Not for "my friend" without a name: people have many friends, and
        "my friend lives in Dallas" says nothing of the one in Austin.
        """
        if self.subject in MANY:
            return False
        return self.attribute in SINGLE_VALUED or ":" in self.attribute


def read(text: str) -> Reading | None:
    """The slot a statement sets, or ``None`` when it sets none this module knows.

    Example:
        >>> r = read("These days I cycle to the office instead of taking the train")
        >>> (r.slot, r.value, r.change)
        ('user/commute', 'bike', True)
        >>> r = read("我上个月搬到深圳了")
        >>> (r.slot, r.value, r.change)
        ('user/residence', '深圳', True)
    """
    if len(text) > _CACHED_CHARS:
        return _read(text)
    return _read_cached(text)


def _read(text: str) -> Reading | None:
    text = " ".join(text.split())
    if not text:
        return None
    # "from green tea to black coffee": the new value is read from the rest
    # ("switched to black coffee"), the old one kept to match earlier memories.
    change = split_change(text)
    for frame, m in _matches(change.text):
        reading = _reading(text, change, frame, m)
        if reading is not _EMPTY:
            return reading
    return None


def readings(text: str) -> list[Reading]:
    """Every slot a statement sets: the whole sentence's, then each clause's.

    :func:`read` gives one slot per statement, the first its table order
    finds; a statement of two clauses may set two, or two values of one
    attribute held many at a time ("I love eating steak, meat is my favourite
    food" likes both, and giving up meat gives up the second).

    Example:
        >>> text = "I love eating steak, meat is my favourite food"
        >>> [(r.attribute, r.value) for r in readings(text)]
        [('likes', 'eat steak'), ('likes', 'meat')]
    """
    if len(text) > _CACHED_CHARS:
        return list(_readings(text))
    return list(_readings_cached(text))


def _readings(text: str) -> tuple[Reading, ...]:
    found = [r for r in [read(text)] if r is not None]
    clauses = [c for c in re.split(r"[,;.!?，。；！？]+", text) if c.strip()]
    if len(clauses) > 1:
        found += [r for c in clauses if (r := read(c)) is not None]
    unique: dict[tuple[str, str], Reading] = {}
    for r in found:
        unique.setdefault((r.slot, r.value), r)
    return tuple(unique.values())


# A capture reads the same statements many times: each new event, and each
# candidate it is judged against, once per event of the turn (a 50-sentence
# turn judges ~400 pairs). Readings are pure functions of the text and
# frozen, so they are kept; long texts (rarely read twice) are not, which
# bounds what the caches hold to a few megabytes.
_CACHED_CHARS = 1000
_read_cached = functools.lru_cache(maxsize=8192)(_read)
_readings_cached = functools.lru_cache(maxsize=8192)(_readings)


_EMPTY = Reading("", "", "")  # a pattern matched a value with no content ("it")


def _reading(text: str, change: Change, frame: str, m: re.Match[str]) -> Reading | None:
    """The reading one pattern's match gives; :data:`_EMPTY` to try the next one."""
    value, topic = m.group("v"), m.groupdict().get("t") or ""
    subject = _subject(change.text[: m.start()], change.text)
    if subject is None:
        return None
    key = value_key(value, frame)
    if not key:
        # "... and still drink it": the value is elsewhere in the sentence.
        return _EMPTY
    attribute, key = _refine(frame, key, topic, value.lower())
    if attribute == "switch" and not change.previous:
        return None  # "I switched to X" with X of no known category: unread
    if attribute in ("switch", "stop"):
        attribute = ANY
    if frame in ("switch", "stop"):
        key = value_key(value, attribute)  # "啤酒" is "beer" once it is a drink
    c = cues(text, attribute, span=_clause(change.text, m))
    negated = c.negated
    if frame == "stop":
        # "I gave up X" denies X; "I never gave up X" does not.
        negated = not denies(_head(change.text, m))
    moved = attribute == "residence" and c.moved
    return Reading(
        subject=subject,
        attribute=attribute,
        value=key,
        negated=negated,
        # Stopping is a change in itself ("I cut out meat").
        change=(negated if frame == "stop" else c.change) or moved,
        correction=c.correction,
        addition=c.addition,
        hypothetical=c.hypothetical,
        question=c.question,
        raw_value=value.strip(),
        previous=change.previous,
        switched=c.switched or bool(change.previous),
    )


def _matches(text: str) -> Iterator[tuple[str, re.Match[str]]]:
    # The table's order decides, not the position: "These days I cycle to the
    # office instead of taking the train" is about cycling (the first, more
    # specific commute pattern), whatever comes first in the sentence.
    table = ZH if re.search(r"[\u4e00-\u9fff]", text) else EN
    for attribute, pattern in table:
        m = pattern.search(text)
        if m is not None:
            yield attribute, m


def _clause(text: str, m: re.Match[str]) -> str:
    """The match with what precedes it in its clause: where its negation sits.

    "I live in Ningbo, not Hangzhou" denies Hangzhou, not Ningbo; "I don't
    enjoy running anymore, my knees hate it" is one denial, not two.
    """
    return _head(text, m) + text[m.start() : m.end()]


def _head(text: str, m: re.Match[str]) -> str:
    """What precedes the match in its clause."""
    return re.split(r"[,.;!?，。；！？]", text[: m.start()])[-1]


def _subject(prefix: str, text: str) -> str | None:
    """``user``, a relation ("sister") or a name; ``None`` when nobody is named."""
    rel = _EN_SUBJECT.search(prefix) or _ZH_SUBJECT.search(prefix)
    if rel is not None:
        name = rel.groupdict().get("name") or ""
        key = relation_key(rel.group("rel"))
        return f"{key}:{name.lower()}" if name else key
    if re.search(r"\b(?:i|i'm|i've|i'd|me|my|we|our)\b|我", prefix, re.I):
        return "user"
    named = _NAME_START.match(prefix.strip())
    if named and named.group("name").lower() not in _NOT_SUBJECT_NAMES:
        return named.group("name").lower()
    if re.match(r"^[\u4e00-\u9fff]{2,3}$", prefix.strip()) and not prefix.startswith(
        ("现在", "最近", "其实", "如果", "上个", "去年", "今年", "这些")
    ):
        return prefix.strip()
    # No subject word before the verb: English and Chinese both drop "I"
    # ("Moved to Berlin last month", "搬到深圳了"), and opinions name their
    # object first ("Redis is fine now").
    if re.search(r"\b(?:he|she|his|her|him)\b|他|她", prefix, re.I):
        return THIRD_PERSON  # someone named before: matches any subject but the user
    if not re.search(r"\b(?:they|it|you|their)\b|他们|你", prefix, re.I):
        return "user"
    return None


def value_key(raw: str, attribute: str) -> str:
    """A value normalised for comparison: words cut to the head phrase, canonical.

    Example:
        >>> value_key("the 7:40 train to work", "commute"), value_key("骑车", "commute")
        ('train', 'bike')
    """
    value = raw.strip().strip("\"'“”").lower()
    value = (
        _CUT_EN.sub("", value) if not re.search(r"[\u4e00-\u9fff]", value) else value
    )
    value = _LEAD_EN.sub("", value)
    value = re.sub(r"(?:市|了|啦|呢)$", "", value).strip(" .!?-")
    return canonical(value, attribute)


def _refine(attribute: str, key: str, topic: str, raw: str) -> tuple[str, str]:
    """Category-specific slots: "switched to Vim" is the editor, "喝咖啡" a drink."""
    if attribute == "schedule":
        # The head word names the event: "the team standup" is "the standup".
        head = (
            (topic.split() or [""])[-1]
            if not re.search(r"[\u4e00-\u9fff]", topic)
            else topic
        )
        return f"schedule:{canonical(head.lower(), 'schedule')}", key
    category = category_of(raw) or category_of(key)
    if attribute in ("switch", "stop") and category:
        return category, key
    if attribute == "uses" and category.startswith("uses:"):
        return category, key
    if attribute == "likes" and category == "drink":
        return "drink", key  # "I also enjoy espresso" is about what one drinks
    return attribute, key
