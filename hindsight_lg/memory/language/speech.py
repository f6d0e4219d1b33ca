"""Who said a statement, and whether it is the speaker's own.

Changes of mind (capture) and the order of what recall shows both need to
know whose statement a memory is, and whether a statement says something of
the speaker's own or reports, quotes, asks or supposes.
"""

from __future__ import annotations

import re

from hindsight_lg.memory.language.cues import cues
from hindsight_lg.model import MemoryRecord

USER = "user"

# A supposition or a choice not made; not "will" or "next year" (a plan).
_WEIGHED_EN = re.compile(
    r"\b(?:if|what if|suppose|supposing|imagine|thinking about|thinking of|"
    r"considering|wondering|maybe|perhaps|might|tempted|not sure)\b",
    re.I,
)
_WEIGHED_ZH = re.compile(
    r"如果|要是|假如|假设|考虑|纠结|要不要|会不会|说不定|犹豫|想不想"
)

# Someone else's words: "X told me", "X said", "according to X", a quotation.
# "I said" / "I told him" are the speaker's own; "as I said" restates.
_REPORTED_EN = re.compile(
    r"\b(?!i\b)(?:[a-z]+)\s+(?:told me|tells me|said|says|texted|wrote|"
    r"mentioned|messaged|claims?|reckons|thinks)\b|\baccording to\b|"
    r"\b(?:heard|hear) (?:that|from)\b|[\"“「][^\"”」]{0,200}\b(?:i|i'm|my)\b",
    re.I,
)
# "他说", "小王告诉我", "听她说", "据说"; not "我说" or "跟你说" (I tell you).
_REPORTED_ZH = re.compile(
    r"(?<![我你])(?:说|讲)(?:[,，:：]|他|她|自己|要|已经|[\"“「])|告诉我|跟我说|跟我讲|"
    r"听(?:[\u4e00-\u9fff]{1,3})说|据说|听说|[\"“「][^\"”」]{0,200}我"
)


def speaker_of(record: MemoryRecord) -> str:
    """Who said ``record`` (its first participant), lower-cased; ``"user"`` if none."""
    return record.participants[0].strip().lower() if record.participants else USER


def reported(text: str) -> bool:
    """Whether ``text`` reports or quotes someone else's words.

    Example:
        >>> reported('Bob told me "I live in Berlin now"'), reported("I live in Berlin")
        (True, False)
        >>> reported("听小王说他搬到深圳了"), reported("我跟你说，我搬到深圳了")
        (True, False)
    """
    zh = re.search(r"[\u4e00-\u9fff]", text) is not None
    return (_REPORTED_ZH if zh else _REPORTED_EN).search(text) is not None


def aside(text: str) -> bool:
    """Whether ``text`` states nothing of the speaker's own as settled.

    A question, a supposition or a choice still weighed ("thinking about
    trying Helix", 纠结要不要搬), or someone else's words (:func:`reported`).
    A plan or a date in the future is settled: "the wedding moved to next
    May" states where it is now.

    Example:
        >>> aside("Thinking about maybe giving Helix a shot"), aside("I use Helix now")
        (True, False)
        >>> aside("婚期挪到明年五一了"), aside("纠结要不要搬到回龙观")
        (False, True)
    """
    zh = re.search(r"[\u4e00-\u9fff]", text) is not None
    weighed = (_WEIGHED_ZH if zh else _WEIGHED_EN).search(text) is not None
    return weighed or cues(text).question or reported(text)
