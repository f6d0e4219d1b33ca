"""How a statement is said: denied, changed, corrected, added to, supposed, asked.

These cues turn a slot reading into a decision (:mod:`.judge`): "I *no longer*
take the train" denies, "*These days* I cycle" changes, "*Sorry, I meant*
Ningbo" corrects, "I *also* enjoy espresso" adds, "*If* I moved to Paris" and
"我*可能*会换工作" suppose, and none of the last two replaces anything.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NEGATION_EN = re.compile(
    r"\b(?:not|never|no longer|no more|don't|doesn't|didn't|isn't|aren't|won't|"
    r"can't|cannot|stopped|quit|gave up|give up|dont|doesnt)\b|n't\b",
    re.I,
)
# "I never quit smoking": a denied stop is no denial.
_STOP_EN = re.compile(r"\b(?:stopped|quit|gave up|give up|giving up)\b", re.I)
_PLAIN_NEGATION_EN = re.compile(
    r"\b(?:not|never|don't|doesn't|didn't|haven't|hasn't|won't|can't|cannot)\b|n't\b",
    re.I,
)
_DISLIKE_EN = re.compile(
    r"\b(?:hate|hates|dislike|dislikes|can't stand|cannot stand|terrible|awful|"
    r"bad|overrated|tired of|sick of)\b",
    re.I,
)
# 不 is a negation except inside words that only look like one.
_NEGATION_ZH = re.compile(
    r"不再|没有|没|别|戒了|戒掉|停了|(?<!差)不(?!错|少|久|过|管|仅|同|然)"
)
# Dislikes that are not negations already ("不喜欢" is read by 不).
_DISLIKE_ZH = re.compile(r"讨厌|受不了|烦死")
_CHANGE_EN = re.compile(
    r"\b(?:instead|switched|switch(?:ing)? to|changed|no longer|anymore|any more|"
    r"stopped|quit|gave up|moved|relocated|from now on|replaced|went back to|"
    r"now|these days|nowadays|lately|recently|started|no more|these past|"
    r"turned|new job|just joined|joined|since (?:last|january|february|march|april|"
    r"may|june|july|august|september|october|november|december|\d{4}))\b",
    re.I,
)
_CHANGE_ZH = re.compile(
    r"现在|最近|这些天|如今|目前|改成|改为|改用|改到|换成|换了|换到|换用|不再|已经|搬|"
    r"开始|戒|跳槽|入职|调到|挪到|以后都|从今以后|转行|而不是|"
    r"改(?=[喝吃坐骑学去住做当穿听看玩打开])"
)
# Adopting a value in place of another: "switched to", "instead of", "改喝".
_SWITCHED_EN = re.compile(
    r"\b(?:switch\w*|chang\w* to|instead|went over to|replac\w*|swapp?\w*)\b", re.I
)
_SWITCHED_ZH = re.compile(
    r"换成|改成|改为|换到|换用|改用|替换|而不是|改(?=[喝吃坐骑学去住做当穿听看玩打开])"
)
_NOW_AND_THEN = re.compile(r"\b(?:every )?now and (?:then|again)\b", re.I)
_MOVED = re.compile(r"\b(?:moved|relocated|moving back)\b|搬", re.I)
_CORRECTION_EN = re.compile(
    r"\b(?:sorry|i meant|i mean|correction|my mistake|my bad|misspoke|typo|"
    r"that's wrong|that was wrong|i was wrong|to clarify|to be precise|"
    r"let me correct|scratch that|not \w+(?: \w+)?,? but)\b|^(?:no|wait)[,.!]",
    re.I,
)
_ACTUALLY = re.compile(r"\bactually\b", re.I)
_CORRECTION_ZH = re.compile(
    r"说错了|不对|我是说|更正|纠正|搞错了|应该是|其实是|记错了|口误|准确地说"
)
_TEMPORAL_EN = re.compile(
    r"\b(?:now|these days|nowadays|lately|recently|anymore|any more|no longer|"
    r"since|started|switched|moved|last (?:week|month|year))\b",
    re.I,
)
_ADDITION_EN = re.compile(
    r"\b(?:also|too|as well|in addition|another|besides|on top of that|both|"
    r"as well as)\b",
    re.I,
)
_ADDITION_ZH = re.compile(r"也|另外|此外|同时|还(?=喜欢|爱|会|养|用|学|喝|吃|有|挺)")
_HYPOTHETICAL_EN = re.compile(
    r"\b(?:if|would|might|may|maybe|perhaps|thinking about|thinking of|considering|"
    r"consider|plan to|planning to|planning on|going to|gonna|want to|wanna|"
    r"hope to|hoping to|someday|one day|could|wonder|wondering|dream|dreaming|"
    r"wish|tempted|in the future|will|i'll|we'll|should i|unless|suppose|"
    r"supposing|imagine|hypothetically|what if|probably)\b",
    re.I,
)
_FROM_NOW_ON = re.compile(r"\bfrom now on\b|从今以后|以后都", re.I)
_HYPOTHETICAL_ZH = re.compile(
    r"如果|要是|假如|假设|可能|也许|或许|考虑|打算|想要|想搬|想去|想换|想学|计划|准备|"
    r"说不定|将来|明年|下个月|下周|会不会|要不要|万一|梦想|希望"
)
_QUESTION_EN = re.compile(
    r"\?\s*$|^(?:what|how|when|where|who|why|which|do|does|did|is|are|should|can|"
    r"could|would|will)\b",
    re.I,
)
_QUESTION_ZH = re.compile(r"[?？]\s*$|吗[。！!]?$|是不是|哪里|哪儿|什么时候|怎么样")


@dataclass(frozen=True, slots=True)
class Cues:
    """The cues found in one statement (see the module docstring)."""

    negated: bool
    change: bool
    correction: bool
    addition: bool
    hypothetical: bool
    question: bool
    moved: bool
    switched: bool = False


def cues(text: str, attribute: str = "", *, span: str | None = None) -> Cues:
    """The cues of ``text``; ``attribute="likes"`` reads "I hate X" as negated.

    Negation is read in ``span`` (the clause that states the value) when
    given, so "I live in Ningbo, not Hangzhou" does not deny Ningbo.

    Example:
        >>> c = cues("I might switch to Vim")
        >>> (c.hypothetical, c.change)
        (True, True)
    """
    zh = bool(re.search(r"[\u4e00-\u9fff]", text))
    scope = text if span is None else span
    negated = bool((_NEGATION_ZH if zh else _NEGATION_EN).search(scope))
    if negated and not zh and _STOP_EN.search(scope):
        negated = not _PLAIN_NEGATION_EN.search(scope)
    if attribute == "likes" and (_DISLIKE_ZH if zh else _DISLIKE_EN).search(scope):
        # "I don't hate it" is the rare double negative; read it as liking.
        negated = not negated
    correction = _correction(text, zh)
    hypothetical = bool((_HYPOTHETICAL_ZH if zh else _HYPOTHETICAL_EN).search(text))
    return Cues(
        negated=negated,
        change=bool(
            (_CHANGE_ZH if zh else _CHANGE_EN).search(_NOW_AND_THEN.sub("", text))
        ),
        correction=correction,
        addition=bool((_ADDITION_ZH if zh else _ADDITION_EN).search(text)),
        hypothetical=hypothetical and not _FROM_NOW_ON.search(text),
        question=bool((_QUESTION_ZH if zh else _QUESTION_EN).search(text.strip())),
        moved=bool(_MOVED.search(text)),
        switched=bool((_SWITCHED_ZH if zh else _SWITCHED_EN).search(text)),
    )


def denies(text: str) -> bool:
    """Whether ``text`` has a negation ("never", "don't", "没有", "不").

    Example:
        >>> denies("I never"), denies("我没有"), denies("I")
        (True, True, False)
    """
    zh = bool(re.search(r"[\u4e00-\u9fff]", text))
    return bool((_NEGATION_ZH if zh else _NEGATION_EN).search(text))


def _correction(text: str, zh: bool) -> bool:
    if zh:
        return bool(_CORRECTION_ZH.search(text))
    if _CORRECTION_EN.search(text):
        return True
    # "Actually" corrects ("Actually, I live in Ningbo") unless the sentence
    # says time passed ("Actually Redis is fine now"): then it is an update.
    return bool(_ACTUALLY.search(text)) and not _TEMPORAL_EN.search(text)
