"""A simulated year per persona: what a person told about themselves outlives it.

Each persona of :mod:`hindsight_lg.bench.year` (English and Chinese) says
facts, preferences, relationships, plans, rules and things marked important,
plus one-off questions and chit-chat, over a year; the store is reopened
between seasons and ``decay()`` runs weekly with no recall in between. At the
end every statement about the person is recalled (top 3) for a direct
question, and every one-off question and bit of chit-chat has faded.

The fast variant runs on the in-memory backend (engines reopened on it); the
slow one on a Milvus Lite file in a temporary folder, closed and reopened.
Both use the real all-MiniLM-L6-v2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_lg.bench.year import (
    PERSONAS,
    Outcome,
    Persona,
    lite_opener,
    play,
    shared_opener,
)
from hindsight_lg.embeddings import FlagEmbeddingEmbedder
from hindsight_lg.testing import InMemoryBackend

BY_NAME = {p.name: p for p in PERSONAS}


@pytest.fixture(scope="module")
def years(minilm: FlagEmbeddingEmbedder) -> dict[str, Outcome]:
    """Each persona's year on the in-memory backend, played once for the module."""
    return {name: _in_memory(p, minilm) for name, p in BY_NAME.items()}


def _in_memory(persona: Persona, minilm: FlagEmbeddingEmbedder) -> Outcome:
    backend = InMemoryBackend()
    backend.setup(dim=minilm.dim, model_id=minilm.model_id)
    return play(persona, shared_opener(backend, minilm))


def _assert_kept_and_faded(outcome: Outcome) -> None:
    forgotten = [key for key, kept in outcome.kept.items() if not kept]
    lingering = {k: s for k, s in outcome.faded.items() if s in ("active", "missing")}
    assert forgotten == [] and lingering == {}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_year_keeps_what_a_person_told_and_fades_chatter(
    name: str, years: dict[str, Outcome]
) -> None:
    """After a year of weekly decay, facts about the person are recalled; chatter faded."""
    _assert_kept_and_faded(years[name])


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_year_archives_one_off_questions_but_never_what_matters(
    name: str, years: dict[str, Outcome]
) -> None:
    """Questions asked once end archived; statements about the person never do."""
    persona, outcome = BY_NAME[name], years[name]
    questions = [f.key for f in persona.fades if f.text.rstrip().endswith(("?", "？"))]
    assert questions and {outcome.faded[k] for k in questions} == {"archived"}
    assert set(outcome.kept_status.values()) <= {"active", "cold"}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_year_of_changes_of_mind_leaves_only_the_current_version(
    name: str, years: dict[str, Outcome]
) -> None:
    """Each change ranks first for its question; no stale statement stays active or cold.

    The script is replayed late in the year, when the first statements have gone
    cold: the replayed change must supersede the cold stale one too.
    """
    outcome = years[name]
    assert outcome.current_first and all(outcome.current_first.values())
    assert (0, 0) == (
        sum(outcome.stale_active.values()),
        sum(outcome.stale_cold.values()),
    )


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_a_year_on_milvus_lite_reopened_each_season(
    name: str, minilm: FlagEmbeddingEmbedder, tmp_path: Path
) -> None:
    """The same year on a Milvus Lite file closed and reopened between seasons."""
    _assert_kept_and_faded(play(BY_NAME[name], lite_opener(tmp_path, minilm)))
