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
speaker's own statement (:func:`..language.speech.reported`) and changes nothing.

Speakers compare case-insensitively and by name only: a person who speaks as
"Maya" in one thread and unnamed ("user") in another is two speakers here.
"""

from __future__ import annotations

import dataclasses

from hindsight_lg.memory.language.slots import Reading
from hindsight_lg.memory.language.speech import USER, speaker_of
from hindsight_lg.model import MemoryRecord


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


def _names(subject: str, speaker: str) -> bool:
    """Whether a reading's subject ("maya", "sister:mei") names ``speaker``."""
    rel, _, name = subject.partition(":")
    return speaker in (subject, name) or (not name and rel == speaker)
