"""Pseudo-relevance feedback brings a memory only when its link to the query means something."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import Hit
from hindsight_lg.memory.recall import feedback
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

# The demo's conversation (hindsight-lg demo), where the reports came from.
SESSIONS = [
    (
        "2026-03-02T09:00",
        [
            "Hi! I'm Maya, I work as a backend engineer at Lumen Labs in Berlin.",
            "I don't like Redis for caching, it bit us in production last year.",
            "My sister Lena is getting married in Lisbon in June, so I need to "
            "book flights.",
        ],
    ),
    (
        "2026-03-09T18:30",
        [
            "I love hiking in the Harz mountains on weekends.",
            "From now on, always answer me in short bullet points.",
        ],
    ),
    (
        "2026-03-20T08:15",
        [
            "Actually Redis is fine for caching now, we moved to a managed cluster.",
            "I'm feeling stressed about the Lumen Labs launch next week.",
            "Remind me to buy a gift for Lena before the wedding.",
        ],
    ),
]
BULLETS = "From now on, always answer me in short bullet points."
REDIS = "Actually Redis is fine for caching now, we moved to a managed cluster."


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


@pytest.fixture
def demo() -> HindsightMemory:
    """The demo's memories, with the hashing embedder and the demo's clock."""
    clock = FrozenClock(_ts("2026-03-21T10:00"))
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    for i, (when, turns) in enumerate(SESSIONS):
        for text in turns:
            memory.capture(
                text,
                namespace="u",
                speaker="Maya",
                thread_id=f"s{i}",
                event_time=_ts(when),
            )
    return memory


def _recalled(memory: HindsightMemory, query: str) -> list[str]:
    found = memory.recall(query, namespace="u", timeout=None)
    return [m.record.content for m in found.memories]


def test_a_shared_common_word_brings_no_unrelated_memory(demo: HindsightMemory) -> None:
    """ "now" in the Redis memory and the bullet-point rule does not link them."""
    assert [REDIS] == _recalled(demo, "What does Maya think about Redis for caching?")
    assert [BULLETS] == _recalled(demo, "How should answers be formatted?")


def test_a_memory_used_before_is_not_recalled_for_an_unrelated_question(
    demo: HindsightMemory,
) -> None:
    """Reinforcing what helped one question does not bring it to the next one."""
    used = demo.recall("What does Maya think about Redis for caching?", namespace="u")
    demo.reinforce("u", used.ids)
    assert REDIS not in _recalled(demo, "How should answers be formatted?")


def _candidate(text: str, dense: float, entities: list[str] | None = None) -> Candidate:
    record = MemoryRecord("u", text, entities=entities or [], participants=["Maya"])
    return Candidate(record, paths={"dense": dense})


def test_a_name_bridges_and_a_common_word_does_not() -> None:
    """Below the lexical floor a hit stays only when it says a name a lender says."""
    lender = _candidate("Maya adopted a puppy named Biscuit now", 0.9)
    chewed = Hit(MemoryRecord("u", "Biscuit chewed the sofa cushions"), 2.4)
    bullets = Hit(MemoryRecord("u", BULLETS), 2.0)
    rare = Hit(MemoryRecord("u", "The adoption papers are in the drawer"), 3.5)
    picked = feedback.borrowed([lender], {"pet"}, 8)
    kept = feedback.meaningful([chewed, bullets, rare], [lender], picked, 3.0)
    assert [chewed, rare] == kept


def test_a_speakers_name_is_no_bridge() -> None:
    """A lender's speaker is named by every memory they said: that links nothing."""
    lender = _candidate("I'm Maya and I adopted a puppy", 0.9, entities=["Maya"])
    said = Hit(MemoryRecord("u", "Nice to meet you, Maya!"), 0.5)
    picked = feedback.borrowed([lender], set(), 8)
    assert [] == feedback.meaningful([said], [lender], picked, 3.0)
