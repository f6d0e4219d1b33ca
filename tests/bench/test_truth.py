"""The speaker corpus runner: what it counts as superseded and current first."""

from __future__ import annotations

import json
from pathlib import Path

from hindsight_lg import HindsightMemory
from hindsight_lg.bench.truth import (
    SpokenPair,
    Statement,
    load_spoken,
    play,
    play_all,
    report,
)
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

DATA = Path(__file__).parents[2] / "benchmarks" / "data" / "changes"


def _pair(label: str, old: str, new: str, answer: str, who: str = "user") -> SpokenPair:
    return SpokenPair(
        id="t",
        lang="en",
        category="test",
        label=label,
        old=Statement("user", old),
        new=Statement(who, new),
        days_apart=10,
        question="Where do I live?",
        answer=answer,
    )


def _memory() -> HindsightMemory:
    return HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=FrozenClock())


def test_a_move_supersedes_and_the_new_home_comes_first() -> None:
    """A move is counted as superseded, and the new statement as returned first."""
    pair = _pair(
        "replace", "I live in Paris.", "I moved to Berlin, I live in Berlin now.", "new"
    )
    with _memory() as memory:
        outcome = play(pair, memory)
    assert outcome.superseded
    assert outcome.current_first is True
    assert outcome.returned[0] == "new"


def test_a_pair_both_answer_has_no_current_first() -> None:
    """Where both statements answer, only supersede is scored."""
    pair = _pair("add", "I live in Paris.", "I also love jazz.", "both")
    outcomes = play_all([pair], _memory)
    assert outcomes[0].current_first is None
    assert not outcomes[0].superseded
    r = report([pair], outcomes)
    assert (r.judged, r.supersede.predicted) == (0, 0)


def test_the_corpora_load_and_are_labelled() -> None:
    """Both corpora parse; labels and answers agree on what should supersede."""
    for name in ("frozen", "dev"):
        pairs = load_spoken(DATA / f"{name}.jsonl")
        assert len(pairs) >= 40
        for p in pairs:
            assert p.answer in ("new", "old", "both")
            if p.label in ("replace", "correct"):
                assert p.answer == "new", p.id
        rows = (DATA / f"{name}.jsonl").read_text("utf-8").splitlines()
        assert len({json.loads(r)["id"] for r in rows}) == len(pairs)
