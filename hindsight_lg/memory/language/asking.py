"""What shape of answer a question asks for: one fact, or several gathered.

"Where does Ann work?" is answered by one memory; "What books has Ann
read?", "How many times did we hike?" and "他去过哪些城市？" are answered by
several, often said months apart. Recall's assembly can spend its budget
differently on the two (:func:`~hindsight_lg.memory.recall.assembly.assemble`):
the words around one fragment for the first, more fragments for the second.

The cues are the grammar of asking, not any topic: a plural after *what* or
*which*, *how many*, the perfect ("what has she painted?", asked over all
the times it happened), *both* or *in common*, and in Chinese 哪些, 几次,
多少次 and 过 after a verb.
"""

from __future__ import annotations

import re

_AUX = (
    r"(?:has|have|had|does|do|did|is|are|was|were|can|could|would|will|should|"
    r"might|may)"
)
# "What (kind of) activities does", "Which cities has": the words between the
# question word and its verb name what is asked for.
_WH_PHRASE = re.compile(
    rf"^\W*(?:what|which)\b(?P<phrase>(?:\s+[\w+&/'-]+){{1,4}}?)\s+{_AUX}\b", re.I
)
# "What are Ann's hobbies?", "What has Ann painted?", "Where have they camped?"
_WH_PLURAL_VERB = re.compile(
    r"^\W*(?:what|which|where|who|whom)\s+(?:are|were|have|has)\b", re.I
)
_GATHER_EN = re.compile(
    r"\b(?:how many|how often|both|in common|all the|what else|kinds? of|types? of|"
    r"sorts? of|ever)\b",
    re.I,
)
# 过 after a verb is the experiential aspect ("去过": ever went), not 过去 or 不过.
_GATHER_ZH = re.compile(
    r"哪些|几次|多少次|几个|多少个|都有|[去吃看做玩用学住买读听到]过"
)
# Words ending in s that are not plurals.
_NOT_PLURAL = re.compile(r"(?:ss|us|is|'s|s')$|^(?:this|was|has|does|yes)$", re.I)


def asks_for_many(question: str) -> bool:
    """Whether ``question`` is answered by several memories gathered together.

    Example:
        >>> asks_for_many("What books has Melanie read?")
        True
        >>> asks_for_many("How many times did Ann go hiking?")
        True
        >>> asks_for_many("他去过哪些城市？")
        True
        >>> asks_for_many("Where does Ann's sister work?")
        False
        >>> asks_for_many("What career path has Caroline chosen?")
        False
    """
    text = question.strip()
    if not text:
        return False
    if _GATHER_ZH.search(text) or _GATHER_EN.search(text):
        return True
    phrase = _WH_PHRASE.match(text)
    if phrase is not None:
        return any(_plural(w) for w in phrase.group("phrase").split())
    return bool(_WH_PLURAL_VERB.match(text))


def _plural(word: str) -> bool:
    """Whether ``word`` reads as an English plural ("cities", "artists/bands")."""
    last = re.split(r"[/&]", word.lower())[-1]
    return len(last) > 3 and last.endswith("s") and not _NOT_PLURAL.search(last)


# A question asked in English without its mark: an auxiliary or a question
# word first ("where does Maya live", "is the user vegetarian").
_ASKS_EN = re.compile(
    r"^\W*(?:what|how|when|where|who|whom|whose|why|which|am|is|are|was|were|do|"
    r"does|did|has|have|had|can|could|would|will|should|shall)\b",
    re.I,
)


def with_its_mark(question: str) -> str:
    """``question`` as the embedder reads a question: with its question mark.

    Agents, tools and people in a hurry type "where does Maya live"; a small
    sentence embedder reads the bare words a little away from the question
    ("where does Maya live?"), and at the relevance floor that can decide
    whether anything is recalled. Text that already ends in punctuation, or
    does not start as an English question, is unchanged.

    Example:
        >>> with_its_mark("where does Maya live"), with_its_mark("list her pets")
        ('where does Maya live?', 'list her pets')
    """
    stripped = question.rstrip()
    if not stripped or not stripped[-1].isalnum() or not _ASKS_EN.match(stripped):
        return question
    return stripped + "?"
