"""Turn a conversation turn into structured events (English + Chinese heuristics).

The heuristics are deliberately transparent: each rule is a keyword list a
reader can check. An LLM extractor (:mod:`hindsight_lg.memory.language.extract`) can
replace them; its output is validated into the same :class:`EventDraft`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from hindsight_lg._text import (
    STOPWORDS,
    has_cjk,
    has_negation,
    split_events,
    terms,
    words,
)
from hindsight_lg.memory.language.relations import NOT_NAMES, relations
from hindsight_lg.memory.language.slots import read
from hindsight_lg.memory.language.timeparse import find_window
from hindsight_lg.model import Kind, SourceKind

_RULES: list[tuple[Kind, re.Pattern[str]]] = [
    (
        # An instruction to the assistant, not a habit told about oneself:
        # "Always answer in French", "from now on ...", "you must never ...".
        # "We always go camping" or "I'll never forget it" is no rule for the
        # agent (a rule lives 700 days at importance 0.9 and is shown as one).
        Kind.RULE,
        re.compile(
            r"\b(from now on|going forward|make sure (you|to)|you must|do not ever|"
            r"don't ever|i want you to|rule)\b"
            r"|\byou (should|will|need to) (always|never)\b"
            r"|^(please |and )?(always|never)\b"
            r"|永远不要|以后都|从现在起|务必|规定|不许|必须|^请?(总是|一定要)|你(一定要|总是)",
            re.I,
        ),
    ),
    (
        Kind.TASK,
        re.compile(
            r"\b(remind me|remember to|don't forget|need to|have to|todo|to-do|deadline|"
            r"i will|i'll|i'm going to|i am going to|planning to|plan to|schedule|"
            # "book" the verb ("to book flights"), not the noun ("a good book").
            r"(?:to|please|you|i|we|let's)\s+book|booked|"
            r"appointment|meeting)\b|提醒|记得|要去|打算|计划|安排|预约|截止|待办|出差|开会",
            re.I,
        ),
    ),
    (
        Kind.PREFERENCE,
        re.compile(
            r"\b(i (really )?(like|love|hate|prefer|enjoy|dislike|adore)|i don't like|"
            # A habit told about oneself: "I never eat pork", "we always camp".
            r"(i|we)('ve| have)? (always|never|usually)|"
            r"i do not like|my favou?rite|is fine for|works for me|can't stand|"
            r"i'm (a )?fan of|i'm into|not a fan)\b"
            r"|喜欢|讨厌|偏好|最爱|爱吃|不爱|习惯用|更愿意|我们?(总是|从不|从来不)",
            re.I,
        ),
    ),
    (
        Kind.EMOTION,
        re.compile(
            r"\b(i feel|i'm feeling|i am feeling|so (happy|sad|angry|stressed|excited|tired)|"
            r"frustrated|anxious|upset|thrilled|worried|depressed|overwhelmed)\b"
            r"|开心|难过|生气|焦虑|担心|沮丧|兴奋|烦|累死|压力",
            re.I,
        ),
    ),
    (
        Kind.QUERY,
        re.compile(
            r"^(what|how|when|where|who|why|can you|could you|please (check|find|look)|"
            r"tell me|look up|search|is it|are there|do you)\b|\?$|？$"
            r"|帮我查|查一下|查查|搜一下|告诉我|是什么|怎么|吗$|呢$",
            re.I,
        ),
    ),
    (
        Kind.FACT,
        re.compile(
            r"\b(i am|i'm|my name is|i live|i work|i was born|my (wife|husband|son|daughter|"
            r"partner|mom|mother|dad|father|friend|sister|brother|dog|cat|job|birthday)|"
            r"i have|i've got|i moved|i studied)\b|我是|我叫|我住|我在.{1,8}工作|我的|我有|生日"
            # Chinese says "my boyfriend", "I'm from", "I'm allergic" without
            # the words above: 我男朋友, 我老家, 我对花生过敏.
            r"|我(?:男朋友|女朋友|老公|老婆|爱人|对象|妈|爸|哥|姐|弟|妹|儿子|女儿|孩子|"
            r"闺蜜|家|养了|老家|来自|出生)|过敏|我在.{1,10}(?:上班|上学|读书|念书)",
            re.I,
        ),
    ),
]
_FILLER = re.compile(
    r"^(ok(ay)?|thanks?( you)?|thx|cool|great|nice|sure|yes|no|yeah|yep|nope|hi|hello|"
    r"hey|bye|good (morning|night)|lol|haha|hmm|wow|got it|sounds good|好的|谢谢|嗯|哈哈|"
    r"你好|再见|收到|好吧)[\s!.。！~]*$",
    re.I,
)
# Words that carry politeness or surprise but no content: an utterance made only
# of these, stopwords and the names of the people talking ("Thanks, Melanie!",
# "Wow, that's awesome!") is an acknowledgement, not a memory.
_ACKNOWLEDGEMENTS = frozenset(
    """thank thanks thx wow cool great nice awesome amazing congrat congrats
    congratulation congratulations yep yup yeah yes hey hi hello bye sure totally
    agree glad sound sounds good lol haha omg oh ah aw aww woohoo yay man sorry hear
    true right indeed absolutely definitely exactly same welcome""".split()
)
# Words that only run the conversation: offers, invitations, promises to wait
# ("Would you like to continue?", "I'll be here waiting for your update",
# "Take all the time you need"). A long assistant reply opens and closes with
# them; what the user may need again is in between. Stems, as :func:`terms`
# gives them.
_MANAGEMENT = frozenset(
    """please take time need sit everyth anyth anytime whenev moment continue
    proceed share mind like let know question feel free reach wait listen help
    happy pleasure assist ready step next hope enjoy talk chat understand
    appreciate perfect excel fantast wonder helpful useful clear ahead start
    shall other update""".split()
)
_UPDATE = re.compile(
    r"\b(actually|now|anymore|no longer|changed my mind|instead|these days|switched|"
    r"not any more|turns out)\b|其实|现在|不再|改成|改为|换成|已经不|后来",
    re.I,
)
_CAUSAL = re.compile(
    r"\b(because|so that|so|therefore|since|that's why|due to)\b"
    r"|因为|所以|因此|为了|由于",
    re.I,
)
_SPECULATION = re.compile(
    r"\b(maybe|perhaps|i think|i guess|probably|might)\b"
    r"|可能|也许|大概|好像",
    re.I,
)
_THIRD_PARTY = re.compile(
    r"\b(he said|she said|they said|told me|heard that)\b"
    r"|听说|他说|她说",
    re.I,
)
_CN_PLACE = re.compile(r"(?:去|在|到|回|飞|从)([\u4e00-\u9fff]{2})")
_CN_SUBJECT = re.compile(r"([\u4e00-\u9fff]{2})(?:明天|今天|后天|的天气|天气)")
_EMOTION_WORDS = re.compile(
    r"\b(happy|sad|angry|stressed|excited|tired|frustrated|anxious|upset|thrilled|"
    r"worried|proud|grateful|lonely)\b|开心|难过|生气|焦虑|担心|沮丧|兴奋|感激|孤独",
    re.I,
)
_NOT_ENTITIES = NOT_NAMES


@dataclass(slots=True)
class EventDraft:
    """One event extracted from a turn, before embedding and storage."""

    content: str
    kind: Kind = Kind.EVENT
    salience: float = 0.5
    entities: list[str] = field(default_factory=list)
    participants: list[str] = field(default_factory=list)
    mentioned_time: float | None = None
    emotion: str = ""
    goal: str = ""
    action: str = ""
    source_kind: SourceKind = SourceKind.USER_CONFIRMED
    is_update: bool = False
    negated: bool = False


@dataclass(slots=True)
class Extraction:
    """Events of one turn and the causal links between them (indexes into events)."""

    events: list[EventDraft]
    causes: list[tuple[int, int]] = field(default_factory=list)


# What an extractor is: (text, speaker, event time) -> the turn's events.
Extractor = Callable[[str, str | None, float], Extraction]


def emotion_words(text: str) -> list[str]:
    """Emotion words in ``text`` (English and Chinese), lowercased, in order."""
    return list(
        dict.fromkeys(m.group(0).lower() for m in _EMOTION_WORDS.finditer(text))
    )


# A question and nothing else: "What seat do I like?" asks, it tells no
# preference; "I love sushi, do you?" tells one. Requests to the assistant
# ("Can you remind me...?") are left to the other rules.
_QUESTION_ONLY = re.compile(
    r"^(?:what|how|when|where|who|whom|whose|why|which|do|does|did|is|are|am|was|"
    r"were|have|has|had|should|shall)\b[^.!?]*\?\s*$"
    r"|^(?!你能|你可以|帮我|请|麻烦)[^。！!，,]*(?:什么|哪|谁|几|多少|怎么|为什么|是不是|有没有)"
    r"[^。！!]*[？?]\s*$|^(?!你能|你可以|帮我|请|麻烦)[^。！!，,]*吗[？?]?\s*$",
    re.I,
)


def classify(text: str) -> Kind:
    """The kind of an event by the first rule that matches (rules are ordered).

    A question and nothing else is a ``query`` (short-lived), whatever words
    it shares with a preference or a fact, unless it states a rule.
    """
    stripped = text.strip()
    if _QUESTION_ONLY.search(stripped) and not _RULES[0][1].search(stripped):
        return Kind.QUERY
    for kind, pattern in _RULES:
        if pattern.search(stripped):
            return kind
    return Kind.EVENT


def entities(text: str) -> list[str]:
    """Capitalised names, quoted terms and Chinese place/subject words, in order."""
    found: list[str] = []
    tokens = words(text)
    for i, tok in enumerate(tokens):
        if (
            tok[:1].isupper()
            and tok not in _NOT_ENTITIES
            and not tok.isupper()
            or (tok.isupper() and len(tok) > 1 and tok not in _NOT_ENTITIES)
        ):
            # A sentence's first word is capitalised whatever it is: a common
            # word there ("From now on ...") is not a name.
            if i == 0 and tok.lower() in STOPWORDS or len(tok) < 2:
                continue
            found.append(tok)
    found += re.findall(r"[\"“']([^\"”']{2,40})[\"”']", text)
    if has_cjk(text):
        found += _CN_PLACE.findall(text) + _CN_SUBJECT.findall(text)
    found += [r.name for r in relations(text)]
    return list(dict.fromkeys(found))


def _only_acknowledges(text: str, ents: list[str]) -> bool:
    if has_cjk(text):
        return False
    names = {w for e in ents for w in terms(e)}
    content = [
        t
        for t in terms(text)
        if t not in _ACKNOWLEDGEMENTS and t not in _MANAGEMENT and t not in names
    ]
    # "I'm into Python" is all stopwords and a name, yet says what the user likes.
    return not content and read(text) is None


def salience(text: str, kind: Kind, ents: list[str], has_time: bool) -> float:
    """How worth remembering an event is, in [0, 1]."""
    if _FILLER.match(text.strip()) or _only_acknowledges(text, ents):
        return 0.05
    base = {
        Kind.RULE: 0.8,
        Kind.PREFERENCE: 0.75,
        Kind.TASK: 0.7,
        Kind.FACT: 0.6,
        Kind.EMOTION: 0.5,
        Kind.EVENT: 0.45,
        Kind.QUERY: 0.35,
        Kind.EXPERIENCE: 0.6,
    }[kind]
    length = len(text) if has_cjk(text) else len(text.split())
    base += 0.05 * min(len(ents), 3) + (0.05 if has_time else 0.0)
    if length < 3:
        base -= 0.2
    return round(max(0.0, min(1.0, base)), 3)


def _draft(text: str, speaker: str | None, ref_time: float) -> EventDraft:
    kind = classify(text)
    ents = entities(text)
    window = find_window(text, ref_time)
    emotion = m.group(0).lower() if (m := _EMOTION_WORDS.search(text)) else ""
    source = SourceKind.USER_CONFIRMED
    if _SPECULATION.search(text):
        source = SourceKind.USER_SPECULATION
    elif _THIRD_PARTY.search(text):
        source = SourceKind.THIRD_PARTY
    return EventDraft(
        content=text,
        kind=kind,
        salience=salience(text, kind, ents, window is not None),
        entities=ents,
        participants=[speaker] if speaker else [],
        mentioned_time=window.start if window else None,
        emotion=emotion,
        goal=text if kind is Kind.TASK else "",
        source_kind=source,
        is_update=bool(_UPDATE.search(text)),
        negated=has_negation(text),
    )


def extract(text: str, *, speaker: str | None, ref_time: float) -> Extraction:
    """Heuristic extraction: split, classify, score, and link causes within the turn.

    Example:
        >>> x = extract("帮我查一下上海明天的天气，另外我下周三要去上海出差，记得提醒我带伞",
        ...             speaker="user", ref_time=0.0)
        >>> [e.kind.value for e in x.events], x.causes
        (['query', 'task'], [(1, 0)])
    """
    events = [_draft(part, speaker, ref_time) for part in split_events(text)]
    return Extraction(events=events, causes=_causal_links(events, text))


_LINK_SPAN = 8


def _causal_links(events: list[EventDraft], text: str) -> list[tuple[int, int]]:
    # Within a turn, an event causes a later one when the turn says so
    # ("because", "所以") or when a question and a plan share an entity: the
    # weather question exists because of the trip.
    # Each event's cue and entities are read once, and an event is paired
    # only with the few before it (_LINK_SPAN): a question and the plan it
    # serves sit close in one turn, and all pairs would be quadratic in a
    # long turn's events (thousands in a pasted list).
    links: list[tuple[int, int]] = []
    ents = [set(e.entities) for e in events]
    causal = [bool(_CAUSAL.search(e.content)) for e in events]
    for j in range(1, len(events)):
        for i in range(max(0, j - _LINK_SPAN), j):
            planning = {events[i].kind, events[j].kind} == {Kind.QUERY, Kind.TASK}
            if planning and not ents[i].isdisjoint(ents[j]):
                task = i if events[i].kind is Kind.TASK else j
                links.append((task, i + j - task))
            elif causal[j] and j == i + 1:
                links.append((i, j))
    return sorted(set(links))
