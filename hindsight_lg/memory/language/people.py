"""The people a question is about, left out of what the dense path embeds.

A small sentence embedder reads a shared name as most of a short text's
meaning. With all-MiniLM-L6-v2, "What is Caroline's identity?" is closer to
"I totally agree, Caroline." (cosine 0.65) than to "I'm a transgender woman
and proud of it." (0.14); without the name, "What is identity?" gives 0.04
and 0.26. In a long conversation the people in it are named in turn after
turn, mostly in passing, so a question about one of them draws that chatter
first. Who is who is what the lexical, entity and speaker paths match; the
dense path is there for meaning, so it embeds the question without the
names of the people it is about.

The rule reads the question's grammar, not the memories: a name is a
person's when the question makes it the subject of its verb ("What did
Caroline research?", "How long has Mel been painting?") or a possessor
("Caroline's identity"). Other names stay: "Where did we go in Paris?"
asks about Paris, and "What do I use Redis for?" about Redis. A question
left without a content word ("Who is Anna?") is embedded whole.

Cost: one regular expression per name the question mentions.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from hindsight_lg._text import terms

# Auxiliaries that put the name after them in the subject's place.
_AUXILIARIES = (
    "am|is|are|was|were|do|does|did|has|have|had|will|would|can|could|shall|"
    "should|may|might|must"
)
_POSSESSIVE = re.compile(r"['’]s$")


@functools.lru_cache(maxsize=4096)
def _patterns(name: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    n = re.escape(name)
    # "Dr. Seuss" after "have" is an abbreviation, not a subject.
    person = re.compile(
        rf"\b{n}['’]s\b|\b(?:{_AUXILIARIES})\s+{n}\b(?!\.\s*[A-Z])", re.IGNORECASE
    )
    mention = re.compile(rf"\b{n}(?:['’]s)?\b", re.IGNORECASE)
    return person, mention


def without_people(question: str, names: Iterable[str]) -> str:
    """``question`` without the names of the people it asks about.

    Args:
        question: the text the dense path would embed.
        names: the names found in it (``Probe.entities``).

    Returns:
        The question with each person's name (and its ``'s``) removed, or the
        question unchanged when no name is a person's or nothing would be
        left to embed.

    Example:
        >>> without_people("What did Caroline research?", ["Caroline"])
        'What did research?'
        >>> without_people("Where did we go in Paris?", ["Paris"])
        'Where did we go in Paris?'
        >>> without_people("Who is Anna?", ["Anna"])
        'Who is Anna?'
    """
    bases = [_POSSESSIVE.sub("", n) for n in names]
    bases = [b for b in bases if b[:1].isalpha() and b.isascii()]
    people = [b for b in bases if _patterns(b)[0].search(question)]
    # "Caroline and Melanie" are both the subject.
    people += [b for b in bases if b not in people and _joined(question, b, people)]
    if not people:
        return question
    text = question
    for name in people:
        text = _patterns(name)[1].sub(" ", text)
    text = " ".join(text.split())
    return text if terms(text) else question


def _joined(question: str, name: str, people: list[str]) -> bool:
    if not people:
        return False
    them = "|".join(re.escape(p) for p in people)
    n = re.escape(name)
    link = r"\s*(?:,|and|or|&)\s*"
    return (
        re.search(rf"\b(?:{them}){link}{n}\b|\b{n}{link}(?:{them})\b", question, re.I)
        is not None
    )


# "the user" as an agent or a tool call says it, and what the user says of
# themselves: "Where does the user live?" asks what "I live in Berlin" says.
_USER = r"(?:the\s+)?user"
_AUX_AS_I = {"does": "do", "is": "am", "has": "have", "was": "was", "did": "did"}
_USER_SUBJECT = re.compile(
    rf"\b(does|do|did|is|was|has|have|had|can|could|will|would|should|may|might|must)"
    rf"\s+{_USER}\b",
    re.IGNORECASE,
)
_USER_POSSESSIVE = re.compile(rf"\b{_USER}['’]s\b", re.IGNORECASE)
# "The user lives where?", "Where the user works": the subject before a verb.
_USER_BEFORE_VERB = re.compile(
    r"^(\W*(?:(?!the\b)\w+\W+)?)the\s+user\b(?=\s+\w)", re.IGNORECASE
)
_USER_ELSEWHERE = re.compile(r"\bthe\s+user\b", re.IGNORECASE)
_USER_ZH = re.compile(r"用户|使用者")


def as_the_user_says_it(question: str) -> str:
    """``question`` about "the user" put in the first person the user speaks in.

    Memories hold what the user said ("I live in Berlin"); agents and tools
    ask about "the user". A small embedder reads "the user" as part of the
    question's meaning, so the dense path embeds the question as the user
    would ask it. Other text is unchanged.

    Example:
        >>> as_the_user_says_it("Where does the user live?")
        'Where do I live?'
        >>> as_the_user_says_it("What is the user's job? Remind the user of it.")
        'What is my job? Remind me of it.'
        >>> as_the_user_says_it("用户住在哪里？"), as_the_user_says_it("Where do I live?")
        ('我住在哪里？', 'Where do I live?')
    """
    text = _USER_ZH.sub("我", question)
    text = _USER_POSSESSIVE.sub("my", text)
    text = _USER_SUBJECT.sub(lambda m: f"{_aux_for_i(m.group(1))} I", text)
    text = _USER_BEFORE_VERB.sub(lambda m: f"{m.group(1)}I", text)
    return _USER_ELSEWHERE.sub("me", text)


def _aux_for_i(aux: str) -> str:
    word = _AUX_AS_I.get(aux.lower(), aux.lower())
    return word.capitalize() if aux[:1].isupper() else word
