"""The second hop (recall/hop.py) and names used only to address someone."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory, MemoryRecord, Policy
from hindsight_lg.backends.base import Hit
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.memory.language.address import only_addressed
from hindsight_lg.memory.recall.hop import addressed, hop_vector
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.model import TURN_KEY
from hindsight_lg.testing import FrozenClock, HashingEmbedder


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Glad you've got people to lean on, Melanie.", True),
        ("Wow, Melanie, what a beautiful moment!", True),
        ("Hey Melanie! Long time no see.", True),
        ("Melanie, that photo's amazing!", True),
        ("Thanks Melanie", True),
        ("I went hiking with Melanie.", False),
        ("Hey Melanie! I told Melanie's sister about it.", False),
        ("Melanie said the park was closed.", False),
        ("Nothing about her here.", False),
    ],
)
def test_a_name_is_addressed_only_when_every_mention_is_a_vocative(
    text: str, expected: bool
) -> None:
    assert only_addressed(text, ["Melanie"]) is expected


def test_the_entity_path_discounts_what_was_said_to_the_person() -> None:
    """Said to Melanie by someone else: discounted; said by her, or about her: kept."""
    told = MemoryRecord(
        namespace="u",
        content="Glad you've got people to lean on.",
        participants=["Caroline"],
        meta={TURN_KEY: "Glad you've got people to lean on, Melanie."},
    )
    said = MemoryRecord(
        namespace="u", content="Thanks, Melanie!", participants=["Melanie"]
    )
    about = MemoryRecord(
        namespace="u", content="I went hiking with Melanie.", participants=["Caroline"]
    )
    hits = [Hit(r, 1.0) for r in (told, said, about)]
    assert addressed(hits, ["Melanie"]) == {told.id}


def _store(memory: HindsightMemory, texts: dict[str, str]) -> dict[str, MemoryRecord]:
    embedder = memory.embedder
    records = {
        key: MemoryRecord(
            namespace="u",
            content=text,
            dense=[float(x) for x in embedder.embed([text])[0]],
        )
        for key, text in texts.items()
    }
    memory.backend.upsert("u", list(records.values()))
    return records


def _engine(clock: FrozenClock, **policy: object) -> HindsightMemory:
    return HindsightMemory(
        InMemoryBackend(),
        HashingEmbedder(),
        clock=clock,
        policy=Policy(**policy),  # type: ignore[arg-type]
    )


def test_the_hop_reaches_a_memory_close_to_the_best_hit_not_to_the_question(
    clock: FrozenClock,
) -> None:
    """The bridge shares words with the answer's first half only: the hop finds it,
    the lender gets no hop credit, and without the hop the bridge has no hop path."""
    texts = {
        "hit": "Jon lost his banker job and opened a dance studio downtown",
        "bridge": "The dance studio downtown hosts a salsa night every Friday",
        "other": "Gina sells hoodies in her online clothing store",
    }
    paths: dict[bool, dict[str, dict[str, float]]] = {}
    for on in (True, False):
        memory = _engine(clock, hop_docs=2 if on else 0)
        records = _store(memory, texts)
        result = memory.recall(
            "What did Jon do after the banker job?",
            namespace="u",
            budget_tokens=2000,
            explain=True,
            timeout=None,
        )
        assert result.explanation is not None
        paths[on] = {
            key: result.explanation.get(records[key].id, {}) for key in records
        }
        memory.close()
    assert paths[True]["bridge"].get("hop", 0.0) > 0
    assert "hop" not in paths[True]["hit"]  # the lender: the hop starts from it
    assert "hop" not in paths[False]["bridge"]


def test_an_unrelated_question_still_recalls_nothing_with_the_hop(
    clock: FrozenClock,
) -> None:
    """No hit bears on the question, so nothing lends a vector and no block is made."""
    memory = _engine(clock)
    _store(
        memory,
        {
            "a": "Jon opened a dance studio downtown",
            "b": "The dance studio hosts a salsa night",
        },
    )
    result = memory.recall(
        "boiling point of mercury?", namespace="u", budget_tokens=500, timeout=None
    )
    assert result.to_prompt() == ""
    memory.close()


def test_the_hop_vector_is_the_unit_sum_and_skips_a_foreign_vector() -> None:
    same = Candidate(MemoryRecord(namespace="u", content="a", dense=[0.0, 1.0]))
    other = Candidate(MemoryRecord(namespace="u", content="b", dense=[1.0, 0.0, 0.0]))
    v = hop_vector([1.0, 0.0], [same, other])
    assert v == pytest.approx([2**-0.5, 2**-0.5])
