"""Every write path holds what it accepts to what the store can keep."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import MAX_LABEL_BYTES, MAX_TEXT_BYTES

HOSTILE_TEXTS = {
    "nul": "tea\x00time",
    "surrogate": "tea\ud800",
    "oversize": "x" * (MAX_TEXT_BYTES + 1),
    "oversize-utf8": "数" * (MAX_TEXT_BYTES // 3 + 1),
}


@pytest.mark.parametrize("text", HOSTILE_TEXTS.values(), ids=HOSTILE_TEXTS.keys())
def test_remember_update_and_correct_refuse_what_the_store_cannot_keep(
    memory: HindsightMemory, namespace: str, text: str
) -> None:
    """NUL, lone surrogates and text over 16 KiB are refused; nothing changes."""
    kept = memory.remember("The user drinks green tea", namespace=namespace)
    with pytest.raises(ValueError):
        memory.remember(text, namespace=namespace)
    with pytest.raises(ValueError):
        memory.update(namespace, kept.id, content=text)
    with pytest.raises(ValueError):
        memory.correct(namespace, kept.id, text)
    [only] = memory.list_memories(namespace, history=True)
    assert (only.content, only.version) == ("The user drinks green tea", 1)


def test_text_at_the_limit_is_kept(memory: HindsightMemory, namespace: str) -> None:
    """Exactly 16 KiB of UTF-8 is a memory (the limit is inclusive)."""
    text = "é" * (MAX_TEXT_BYTES // 2)
    record = memory.remember(text, namespace=namespace)
    got = memory.get(namespace, record.id)
    assert got is not None and got.content == text


def test_update_of_the_content_refreshes_the_summary(
    memory: HindsightMemory, namespace: str
) -> None:
    """The summary follows new content (the panel list and store.get show it)."""
    record = memory.remember("The user lives in Porto", namespace=namespace)
    memory.update(namespace, record.id, content="The user lives in Lisbon now")
    got = memory.get(namespace, record.id)
    assert got is not None and got.summary == "The user lives in Lisbon now"


def test_a_speaker_or_source_id_over_the_limit_is_refused(
    memory: HindsightMemory, namespace: str
) -> None:
    """capture's speaker and source ids are bounded at the door."""
    with pytest.raises(ValueError, match="speaker"):
        memory.capture("I like tea", namespace=namespace, speaker="A" * 600)
    with pytest.raises(ValueError, match="source_ids"):
        memory.capture("I like tea", namespace=namespace, source_ids=["x" * 600])
    with pytest.raises(ValueError, match="source_ids"):
        memory.capture("I like tea", namespace=namespace, source_ids=["s"] * 300)
    assert memory.list_memories(namespace) == []


def test_a_long_message_name_and_id_are_cut_to_fit(
    memory: HindsightMemory, namespace: str
) -> None:
    """A client's message name or id is made to fit, never a reason to drop a turn."""
    message = {
        "role": "user",
        "content": "I adore rock climbing in Yosemite",
        "name": "N\x00" + "n" * 5000,
        "id": "i" * 5000,
    }
    [record] = memory.capture([message], namespace=namespace)
    sizes = [len(x.encode()) for x in record.participants + record.source_ids]
    assert sizes and max(sizes) <= MAX_LABEL_BYTES
    assert all("\x00" not in x for x in record.participants)
