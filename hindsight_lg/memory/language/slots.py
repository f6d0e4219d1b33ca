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

_EN_REL = (
    r"sister|brother|wife|husband|son|daughter|mom|mum|mother|dad|father|"
    r"best friend|friend|boss|manager|partner|colleague|coworker|cousin|aunt|uncle|"
    r"grandma|grandmother|grandpa|grandfather|roommate|girlfriend|boyfriend|"
    r"dog|cat|kid|child|neighbou?r|team|family"
)
_ZH_REL = (
    "好朋友|男朋友|女朋友|妹妹|姐姐|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|老公|妻子|丈夫|"
    "儿子|女儿|朋友|同事|老板|经理|室友|邻居|狗|猫|孩子"
)
# 叫 names the word just before it: "我叫小王" is the user's name, "我妹妹叫小美"
# the sister's, and in "我养了只柯基叫馒头" or "新来的实习生叫小刘" it names a
# dog and an intern, not the user (who is merely in the sentence).
_ZH_NAMED = "|".join(
    f"(?<={who})" for who in ["我", "我的名字", "名字", *_ZH_REL.split("|")]
)
_V = r"(?P<v>[^,.;!?]+)"  # an English value: up to the end of the clause
# A place may carry its region: "Portland, Oregon" is not "Portland, Maine".
_PLACE = r"(?P<v>[^,.;!?]+(?:,\s*[A-Z][a-z]+(?: [A-Z][a-z]+)?(?=\s*(?:$|[,.;!?])))?)"
# A Chinese value, shortest first; Latin words in it keep their spaces ("VS Code").
_ZV = r"(?P<v>(?:[\u4e00-\u9fffA-Za-z0-9]|(?<=[A-Za-z0-9]) (?=[A-Za-z0-9])){1,12}?)"
_ZEND = (
    r"(?=了|的|吧|啊|呢|，|,|。|！|!|？|\?|；|(?<![A-Za-z0-9])\s|\s(?![A-Za-z0-9])|"
    r"和|跟|上班|工作|$)"
)

# (attribute, pattern) in order; the first match in a clause is its slot.
_EN: list[tuple[str, re.Pattern[str]]] = [
    (a, re.compile(p, re.I))
    for a, p in [
        ("name", rf"\b(?:name is|call me|i'm called|i am called|named) {_V}"),
        (
            "age",
            r"\b(?:i'm|i am|i turned|turned|is|am now|i'm now)\s+(?P<v>\d{1,3})"
            r"(?:\s*(?:years? old|yo))?\b",
        ),
        (
            "schedule",
            r"\b(?:my|the|our)\s+(?P<t>[\w-]+(?: [\w-]+)?)\s+(?:is|are|starts|"
            r"happens|moved|was moved|has moved|got moved|changed|is now)"
            r"\s+(?:now\s+)?(?:to\s+)?(?P<v>(?:on|at|every)\s+[^,.;!?]+|"
            r"\d[^,.;!?]*)",
        ),
        (
            "schedule",
            r"\bi (?:go to|do|have|attend)\s+(?P<t>[\w-]+(?: class)?)\s+"
            r"(?P<v>(?:on|every|at)\s+[^,.;!?]+)",
        ),
        (
            "commute",
            r"\b(?P<v>cycl\w*|bik\w*|driv\w*|walk\w*|ride (?:my|a) bike|"
            r"scoot\w*)\s+(?:to|into)\s+(?:work|the office|office|school|"
            r"campus|my job)",
        ),
        (
            "commute",
            rf"\b(?:commut\w*|go(?:es)? to work|get to work|travel to work)"
            rf"\s+(?:by|on|via)\s+{_V}",
        ),
        (
            "commute",
            r"\b(?:take|takes|taking|took|catch|catches|ride|rides|riding)\s+"
            r"(?P<v>(?:the |a |my )?[\w:.]*\s*(?:train|bus|subway|metro|tube|"
            r"tram|ferry|shuttle|bike|car|taxi|uber))\b",
        ),
        (
            "residence",
            rf"\b(?:live|lives|living|lived|reside\w*|based|settled)\s+"
            rf"(?:now\s+)?in\s+{_PLACE}",
        ),
        (
            "residence",
            rf"\b(?:moved|move|moving|relocated|relocating)\s+(?:back\s+)?"
            rf"(?:to|into)\s+{_PLACE}",
        ),
        ("residence", rf"\b(?:home is in|my home is|i'm from|i am from)\s+{_PLACE}"),
        ("occupation", rf"\b(?:work|works|working|worked|job)\s+as\s+{_V}"),
        (
            "occupation",
            rf"\b(?:my job is|i became|became|retrained as|"
            rf"i'm now|i am now)\s+(?:an? )?{_V}",
        ),
        (
            "employer",
            rf"\b(?:work|works|working|worked|employed)\s+(?:at|for|by)\s+{_V}",
        ),
        (
            "employer",
            rf"\b(?:joined|join|started at|start at|got a job at|"
            rf"hired by|my employer is|my company is)\s+{_V}",
        ),
        (
            "diet",
            r"\b(?:i'm|i am|is|am|went|gone|became)\s+(?:now\s+|a\s+|fully\s+|not\s+|"
            r"no longer\s+|still\s+)*"
            r"(?P<v>vegetarian|vegan|pescatarian|keto|gluten-free|"
            r"dairy-free|omnivore)\b",
        ),
        (
            "likes",
            r"\b(?:i|we|he|she|they)\s+(?:really\s+|also\s+|still\s+|now\s+|"
            r"do\s+|don't\s+|do not\s+|didn't\s+|no longer\s+|never\s+|"
            r"actually\s+|kind of\s+|totally\s+|absolutely\s+|quite\s+)*(?:like|likes|love|loves|enjoy|enjoys|adore|prefer|"
            r"prefers|hate|hates|dislike|dislikes|can't stand|cannot stand)\s+"
            rf"{_V}",
        ),
        ("likes", rf"\b(?:fan of|into|fond of|tired of|sick of)\s+{_V}"),
        ("likes", rf"\bmy (?:favou?rite|fave) [\w ]{{1,20}}? (?:is|are)\s+{_V}"),
        (
            "likes",
            r"(?P<v>[\w. +#-]{2,40}?)\s+(?:is|are)\s+(?:totally\s+|actually\s+|"
            r"really\s+|now\s+|just\s+)*(?:fine|great|good|ok|okay|awesome|"
            r"terrible|awful|bad|overrated|the best|my favou?rite)\b",
        ),
        ("habit", r"\b(?P<v>smok(?:e|es|ing)|vap(?:e|es|ing))\b(?!d)"),
        ("drink", rf"\b(?:drink|drinks|drinking|sip)\s+{_V}"),
        (
            "drink",
            rf"\bmy (?:morning|usual|daily|go-to) (?:drink|coffee|tea) is\s+{_V}",
        ),
        ("food", rf"\b(?:eat|eats|eating)\s+{_V}"),
        (
            "uses",
            rf"\b(?:use|uses|using|code in|write in|program in|write|writes|"
            rf"writing)\s+{_V}",
        ),
        ("uses", rf"\bmy (?:editor|phone|laptop|browser|ide|os) is\s+{_V}"),
        (
            "studies",
            rf"\b(?:study|studies|studying|learn|learns|learning|major in|"
            rf"majoring in|taking classes in)\s+{_V}",
        ),
        ("speaks", rf"\b(?:speak|speaks|speaking)\s+{_V}"),
        ("plays", rf"\b(?:play|plays|playing)\s+{_V}"),
        (
            "pet",
            r"\b(?:have|has|got|adopted)\s+(?:a|an|two|three|\d+)\s+"
            r"(?:\w+\s+)?(?P<v>dogs?|cats?|puppy|kitten|parrot|rabbit|hamster|"
            r"fish|turtle)\b",
        ),
        (
            "switch",
            rf"\b(?:switched|switch|switching|changed|moved|went)\s+"
            rf"(?:over\s+|back\s+|on\s+)?to\s+{_V}",
        ),
        # What one has, orders or sticks to, read by the value's category
        # ("I have coffee in the afternoon" is a drink; "I have a meeting" nothing).
        (
            "switch",
            rf"\b(?:have|has|having|get|gets|order|orders|ordering|choose|pick|"
            rf"opt for|go for|went for|stick to|stick with|stuck with)\s+{_V}",
        ),
        (
            "stop",
            r"\b(?:gave up|give up|giving up|given up|quit|quitting|stopped|ditched|"
            r"dropped|kicked|cut out|done with|no longer|no more)\s+"
            r"(?!(?:at|by|in|for|to|on|with|off|here|there|it|that|this|them|him|her|"
            rf"me|us|you|now|today)\b){_V}",
        ),
    ]
]
_ZH: list[tuple[str, re.Pattern[str]]] = [
    (a, re.compile(p))
    for a, p in [
        ("name", rf"(?:{_ZH_NAMED})(?:叫|名字是){_ZV}{_ZEND}"),
        ("age", r"(?P<v>\d{1,3})岁"),
        (
            "commute",
            r"(?P<v>骑自行车|骑电动车|骑车|开车|自驾|走路|步行|坐地铁|坐公交|"
            r"坐公交车|坐火车|坐高铁|打车|坐班车)(?:去|来)?(?:上班|通勤|去公司)",
        ),
        ("commute", r"(?:坐|乘|搭)(?P<v>地铁|公交车?|火车|高铁|班车|轮渡|出租车)"),
        (
            "commute",
            r"(?:通勤|上班)(?:是|靠|都)?(?P<v>骑车|开车|坐地铁|坐公交|步行|走路)",
        ),
        (
            "residence",
            rf"(?:住在|住|搬到了?|搬去了?|搬回了?|搬家到|定居在?|现居|家在)"
            rf"{_ZV}{_ZEND}",
        ),
        ("residence", rf"(?<![现正实存所好自])在{_ZV}(?:住|生活|定居){_ZEND}"),
        (
            "employer",
            rf"(?<![现正实存所好自])(?:在|去){_ZV}(?:工作|上班|任职|实习){_ZEND}",
        ),
        ("employer", rf"(?:入职了?|加入了?|跳槽到了?|跳槽去了?|就职于){_ZV}{_ZEND}"),
        (
            "occupation",
            r"(?:我是|他是|她是|当了?|做了?|职业是)(?:一名|一个|个)?"
            r"(?P<v>[\u4e00-\u9fff]{0,4}(?:师|员|生|家|工|医生|护士|经理|"
            r"老师|律师|司机|记者|作家|厨师|警察))",
        ),
        ("diet", r"(?P<v>吃素|素食|纯素|生酮)"),
        (
            "likes",
            rf"(?:不太?喜欢|喜欢|讨厌|爱上了?|爱|受不了|偏爱|迷上了?)(?:吃|喝|看|玩|听)?"
            rf"{_ZV}{_ZEND}",
        ),
        ("habit", r"(?P<v>抽烟|吸烟|抽电子烟)"),
        ("drink", rf"(?:喝){_ZV}{_ZEND}"),
        ("food", rf"(?:吃){_ZV}{_ZEND}"),
        ("uses", rf"(?:改用|换用|在用|用){_ZV}{_ZEND}"),
        ("studies", rf"(?:在学|学习|学|读|主修){_ZV}{_ZEND}"),
        ("speaks", r"(?:会说|会讲|说|讲)(?P<v>[\u4e00-\u9fff]{1,4}?(?:语|话|文))"),
        ("plays", rf"(?:会弹|在弹|弹|打|踢|玩){_ZV}{_ZEND}"),
        ("pet", r"养了?(?:一|两|三|\d)?(?:只|条|个)?(?P<v>狗|猫|兔子|鹦鹉|仓鼠|鱼)"),
        (
            "schedule",
            r"(?P<t>[\u4e00-\u9fff]{2,4}?)(?:改到了?|改成了?|挪到了?|调到了?|是|在)"
            r"(?P<v>(?:每周|周|星期|礼拜|每天|早上|上午|下午|晚上)"
            r"[\u4e00-\u9fff0-9:点半]{0,6})",
        ),
        ("switch", rf"(?:换成了?|改成了?|改为|换了|换到了?|换用){_ZV}{_ZEND}"),
        ("stop", rf"(?:戒掉了?|戒了|戒|不再){_ZV}{_ZEND}"),
    ]
]

_EN_SUBJECT = re.compile(
    rf"\b(?:my|our)\s+(?:older |younger |little |big |twin |best )?(?P<rel>{_EN_REL})"
    r"(?:'s)?\b(?:\s+(?P<name>(?-i:[A-Z][a-z]+)))?",
    re.I,
)
_ZH_SUBJECT = re.compile(rf"我的?(?P<rel>{_ZH_REL})")
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
    finds; a statement of two clauses may set two. "Actually Redis is fine
    for caching now, we moved to a managed cluster" changes the user's view
    of Redis, whatever the second clause reads as.

    Example:
        >>> text = "Actually Redis is fine for caching now, we moved to a managed cluster"
        >>> [r.attribute for r in readings(text)]
        ['residence', 'likes']
    """
    if len(text) > _CACHED_CHARS:
        return list(_readings(text))
    return list(_readings_cached(text))


def _readings(text: str) -> tuple[Reading, ...]:
    found = [r for r in [read(text)] if r is not None]
    clauses = [c for c in re.split(r"[,;.!?，。；！？]+", text) if c.strip()]
    if len(clauses) > 1:
        found += [r for c in clauses if (r := read(c)) is not None]
    unique: dict[str, Reading] = {}
    for r in found:
        unique.setdefault(r.slot, r)
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
    table = _ZH if re.search(r"[\u4e00-\u9fff]", text) else _EN
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
