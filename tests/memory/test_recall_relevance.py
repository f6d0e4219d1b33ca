"""Recall returns what bears on the question, and nothing for a question nothing answers.

The labelled set (``data/relevance.json``: five synthetic users, English and
Chinese, 41 questions of which 12 have no answer in memory) is captured with
the packaged MiniLM embedder; ``hindsight_lg.bench.relevance`` scores it.
Before the relevance rule recall returned about six memories for every
question (precision 0.23) and injected a block for every unanswerable one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_lg import HindsightMemory, MemoryRecord
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.bench.relevance import Figures, evaluate, load_set
from hindsight_lg.embeddings import FlagEmbeddingEmbedder
from hindsight_lg.memory.recall.relevance import RelevanceRule, keep_relevant
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.testing import HashingEmbedder

SET = Path(__file__).parent / "data" / "relevance.json"


@pytest.fixture(scope="module")
def figures(minilm: FlagEmbeddingEmbedder) -> Figures:
    """The labelled set recalled at the defaults with MiniLM."""
    memory = HindsightMemory(InMemoryBackend(), minilm)
    try:
        return evaluate(load_set(SET), memory)
    finally:
        memory.close()


def test_the_set_is_bilingual_with_unanswerable_questions() -> None:
    """40+ questions, some Chinese, some with no answer, every label in one memory."""
    users = load_set(SET)
    questions = [q for u in users for q in u.questions]
    assert len(questions) >= 40
    assert sum(not q.answers for q in questions) >= 10
    assert any(not q.text.isascii() for q in questions)
    for u in users:
        for q in u.questions:
            for a in q.answers:
                assert sum(a in m for m in u.memories) == 1, (q.text, a)


def test_precision_and_recall_floors(figures: Figures) -> None:
    """Most returned memories bear on the question, and most answers come back."""
    got = figures.summary()
    assert (got["precision"] >= 0.7, got["recall"] >= 0.8) == (True, True), got


def test_a_focused_question_gets_a_few_lines(figures: Figures) -> None:
    """An answerable question injects about the memories that answer it, not all."""
    assert figures.summary()["lines"] <= 2.0


def test_unanswerable_questions_inject_nothing(figures: Figures) -> None:
    """Nearly every question nothing in memory answers gets no memory and no block."""
    got = figures.summary()
    assert got["unanswered_clean"] >= 0.9, got


def test_an_unrelated_question_injects_no_block_with_the_hashing_embedder() -> None:
    """The rule is calibrated to the embedder in use, the templates' default too."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    memory.capture("I'm allergic to peanuts.", namespace="u", speaker="maya")
    memory.flush()
    unrelated = memory.recall("Who painted the Mona Lisa?", namespace="u", timeout=None)
    related = memory.recall("What am I allergic to?", namespace="u", timeout=None)
    assert (unrelated.to_prompt(), len(related)) == ("", 1)


def test_explain_says_why_a_memory_was_left_out() -> None:
    """Cut memories are named ``unrelated``; kept ones say which path bears on the query."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    kept = memory.remember("Lena is getting married in Lisbon", namespace="u")
    other = memory.remember("The bank closes at five", namespace="u")
    result = memory.recall("When is Lena getting married?", namespace="u", explain=True)
    breakdown = result.memories[0].breakdown
    assert breakdown is not None
    assert (result.ids, result.cut.get(other.id)) == ([kept.id], "unrelated")
    assert breakdown.support in ("dense", "lexical")


def _candidate(text: str, **paths: float) -> Candidate:
    return Candidate(MemoryRecord(namespace="u", content=text), paths=dict(paths))


def test_a_link_counts_only_from_a_memory_that_bears_on_the_query() -> None:
    """Graph activation vouches for a memory only when its seed has support itself."""
    rule = RelevanceRule("m", {"latin": 0.5, "cjk": 0.9}, 3.0, 0.1)
    answer = _candidate("Lena lives in Lisbon.", dense=0.8)
    stray = _candidate("The weather was nice.", dense=0.3)
    near = _candidate("Her flat has a view.", dense=0.2, graph=0.4)
    near.links = {answer.record.id: 0.4}
    by_stray = _candidate("We ate pasta.", dense=0.2, graph=0.4)
    by_stray.links = {stray.record.id: 0.4}
    kept, cut = keep_relevant(
        rule, "Where does Lena live?", [answer, stray, near, by_stray]
    )
    assert [c.record.content for c in kept] == [
        answer.record.content,
        near.record.content,
    ]
    assert (near.support, cut[by_stray.record.id]) == ("via graph", "unrelated")


def test_a_question_in_one_script_meets_a_memory_in_another_on_its_own_floor() -> None:
    """A Chinese question against an English memory takes the cross-script floor."""
    rule = RelevanceRule("m", {"latin": 0.3, "cjk": 0.8, "cjk>latin": 0.1}, 3.0, 0.2)
    assert 0.1 == rule.dense_floor("我住在哪里？", "I live in Leeds.")
    assert 0.8 == rule.dense_floor("我住在哪里？", "我住在利兹。")
    assert 0.3 == rule.dense_floor("Where do I live?", "I live in Leeds.")
    # A floor measured for no pair of scripts (a fixed one) is the query's.
    assert 0.3 == rule.dense_floor("Where do I live?", "我住在利兹。")
