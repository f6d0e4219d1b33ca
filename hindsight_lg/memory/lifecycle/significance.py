"""Lasting importance: what a memory is worth however long it goes unused.

Decay archives a memory only when it is weak (strength below
``policy.archive_threshold``) *and* of low lasting importance (below
``policy.archive_importance``, 0.5). Strength says how available a memory is
now; lasting importance says whether losing it would matter. It is read from
the record itself at each decay, so it applies to stores written before it
existed, and it does not trust the kind classifier alone:

1. marked important (pinned by an application, ``meta["important"]``, or said
   with "remember that", "it's important", "记住", "重要"): at least 0.9;
2. a one-off question (kind ``query``): at most the query seed, 0.2;
3. a rule, preference, task or fact: its own importance (0.5-0.9 from the
   policy, lowered by :func:`~.strength.weaken`);
4. any other question or request to the assistant (ending in a question mark,
   吗 or 呢, or opening with "can you", "tell me", 帮我, 给我): as 2;
5. chit-chat (laughter, "lol", "ugh", "am I right", 哈哈) and feelings (kind
   ``emotion``): at most 0.3;
6. a statement about the person or their people: first person ("I", "my",
   "我") and not pinned to a passing moment ("today", "yesterday", 今天), or
   naming someone's relation ("my sister Lena"): at least 0.5;
7. anything else (episodes, remarks about the world): at most 0.3.

A memory that misled (:func:`~.strength.weaken`) keeps its lowered importance
in 6 as well. The rules are regular expressions over the text, English and
Chinese; they cost microseconds per record.
"""

from __future__ import annotations

import re

from hindsight_lg.memory.policy import Policy
from hindsight_lg.model import Kind, MemoryRecord

#: ``record.meta[PINNED_KEY]``: an item an application stored explicitly
#: (``HindsightStore.put``); decay leaves it active, its TTL expires it.
PINNED_KEY = "pinned"
#: ``record.meta[IMPORTANT_KEY]``: an application marked the memory important.
IMPORTANT_KEY = "important"
_LASTING_KINDS = frozenset({Kind.RULE, Kind.PREFERENCE, Kind.TASK, Kind.FACT})
_PASSING = 0.3
_MARKED = re.compile(
    r"\b(remember (that|this)|(it's|it is|this is) important|important to me|"
    r"don't forget|do not forget|keep in mind|never forget)\b"
    r"|记住|重要|别忘|不要忘",
    re.I,
)
_QUESTION = re.compile(
    r"[?？]\s*$|[吗呢]\s*[。！!]?\s*$"
    r"|^(please |can you|could you|tell me|give me|show me|look up)"
    r"|^(请|帮我|给我|麻烦你|告诉我)",
    re.I,
)
_SMALL_TALK = re.compile(
    r"\b(lol|lmao|rofl|haha\w*|hehe\w*|omg|ugh+|meh|yay|am i right)\b"
    r"|哈哈|呵呵|嘿嘿|好累啊|好烦啊",
    re.I,
)
_SELF = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|mine|we|we're|our)\b|我", re.I)
_MOMENT = re.compile(
    r"\b(today|tonight|yesterday|this (morning|afternoon|evening)|just now|"
    r"right now|earlier today|last night)\b|今天|今晚|昨天|昨晚|刚才|刚刚|今早",
    re.I,
)


def lasting_importance(record: MemoryRecord, policy: Policy) -> tuple[float, str]:
    """How much ``record`` matters in the long run, and why (see the module doc).

    Example:
        >>> from hindsight_lg.model import MemoryRecord
        >>> fact = MemoryRecord(namespace="u", content="I take the 7:40 train.")
        >>> lasting_importance(fact, Policy())
        (0.5, 'about the person')
        >>> chat = MemoryRecord(namespace="u", content="haha that's so funny")
        >>> lasting_importance(chat, Policy())
        (0.3, 'chit-chat')
    """
    text, importance = record.content.strip(), record.importance
    if (
        record.meta.get(PINNED_KEY)
        or record.meta.get(IMPORTANT_KEY)
        or _MARKED.search(text)
    ):
        return max(importance, 0.9), "marked important"
    one_off = min(importance, policy.importance(Kind.QUERY)), "a one-off question"
    if record.kind is Kind.QUERY:
        return one_off
    if record.kind in _LASTING_KINDS:
        return importance, f"a {record.kind.value}"
    if _QUESTION.search(text):
        return one_off
    if _SMALL_TALK.search(text):
        return min(importance, _PASSING), "chit-chat"
    if record.kind is Kind.EMOTION:
        return min(importance, _PASSING), "a passing feeling"
    if _about_the_person(text) and not record.meta.get("misled"):
        return max(importance, policy.archive_importance), "about the person"
    return min(importance, _PASSING), "a passing moment"


def _about_the_person(text: str) -> bool:
    # Imported here: the relation readers load with the first decay, not
    # with every engine.
    from hindsight_lg.memory.language.relations import relations

    if relations(text):
        return True
    return bool(_SELF.search(text)) and not _MOMENT.search(text)
