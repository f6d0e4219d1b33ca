"""Whose statement may change whose: the speaker rule of a change of mind.

In a namespace with several speakers (a group chat, a shared thread, LoCoMo's
two friends), "I live in Berlin" by Tom says nothing of where Maya lives. A
new memory may therefore supersede an earlier one only when

* the same speaker said both (the first participant of each memory; a memory
  with no participant was said by ``"user"``), or
* the earlier one is *about* the new speaker and the new speaker corrects it
  (Tom: "Maya lives in Leeds"; Maya: "I'm in York actually").

Whatever the judge (the heuristics or an LLM) decides, a candidate outside
this rule is left alone. Quoted and reported speech ("Bob told me 'I live in
Berlin now'", "she says she quit") is read by the heuristics as not the
speaker's own statement (:func:`reported`) and changes nothing.

Speakers compare case-insensitively and by name only: a person who speaks as
"Maya" in one thread and unnamed ("user") in another is two speakers here.
"""

from __future__ import annotations

import dataclasses
import re

from hindsight_lg.memory.language.slots import Reading
from hindsight_lg.model import MemoryRecord

USER = "user"

# Someone else's words: "X told me", "X said", "according to X", a quotation.
# "I said" / "I told him" are the speaker's own; "as I said" restates.
_REPORTED_EN = re.compile(
    r"\b(?!i\b)(?:[a-z]+)\s+(?:told me|tells me|said|says|texted|wrote|"
    r"mentioned|messaged|claims?|reckons|thinks)\b|\baccording to\b|"
    r"\b(?:heard|hear) (?:that|from)\b|[\"“「][^\"”」]*\b(?:i|i'm|my)\b",
    re.I,
)
# "他说", "小王告诉我", "听她说", "据说"; not "我说" or "跟你说" (I tell you).
_REPORTED_ZH = re.compile(
    r"(?<![我你])(?:说|讲)(?:[,，:：]|他|她|自己|要|已经|[\"“「])|告诉我|跟我说|跟我讲|"
    r"听(?:[\u4e00-\u9fff]{1,3})说|据说|听说|[\"“「][^\"”」]*我"
)


def speaker_of(record: MemoryRecord) -> str:
    """Who said ``record`` (its first participant), lower-cased; ``"user"`` if none."""
    return record.participants[0].strip().lower() if record.participants else USER


def may_change(
    new: MemoryRecord, old: MemoryRecord, old_reading: Reading | None
) -> bool:
    """Whether ``new``'s speaker may supersede ``old`` (the module's rule)."""
    speaker = speaker_of(new)
    if speaker == speaker_of(old):
        return True
    return old_reading is not None and _names(old_reading.subject, speaker)


def as_said_by(reading: Reading, record: MemoryRecord) -> Reading:
    """``reading`` with its first person resolved to the record's speaker.

    "I live in York" by Maya is about ``maya``; by the user it stays ``user``.
    """
    speaker = speaker_of(record)
    if reading.subject != USER or speaker == USER:
        return reading
    return dataclasses.replace(reading, subject=speaker)


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


def _names(subject: str, speaker: str) -> bool:
    """Whether a reading's subject ("maya", "sister:mei") names ``speaker``."""
    rel, _, name = subject.partition(":")
    return speaker in (subject, name) or (not name and rel == speaker)
