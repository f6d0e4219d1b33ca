"""LoCoMo parsing, evidence normalisation, scoring and baselines on synthetic data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.bench.baselines import (
    RawTurnIndex,
    fill_budget,
    line_cost,
    rrf,
    stream_priors,
)
from hindsight_lg.bench.evaluate import (
    Score,
    answer_coverage,
    answer_words,
    evidence_recall,
    gold_words,
    table,
)
from hindsight_lg.bench.locomo import (
    DialogueTurn,
    Question,
    load_locomo,
    normalise_evidence,
    parse_range,
    parse_when,
)
from hindsight_lg.embeddings import HashingEmbedder


def _sample() -> dict[str, object]:
    return {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy."},
                {
                    "speaker": "Bo",
                    "dia_id": "D1:2",
                    "text": "Look at this!",
                    "blip_caption": "a photo of a red kayak",
                },
            ],
            "session_2_date_time": "10:37 am on 27 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "The puppy is Rex."}
            ],
        },
        "qa": [
            {"question": "What pet?", "evidence": ["D1:1; D2:1"], "category": 1},
            {"question": "Boat?", "evidence": ["D01:02"], "category": 4},
            {"question": "None?", "evidence": [], "category": 5},
        ],
    }


@pytest.fixture
def locomo_file(tmp_path: Path) -> Path:
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([_sample()]), encoding="utf-8")
    return path


def test_parser_reads_turns_in_order_with_dates_and_captions(locomo_file: Path) -> None:
    """Turns come out in session order, dated by their session, captions appended."""
    [conv] = load_locomo(locomo_file)
    assert ["D1:1", "D1:2", "D2:1"] == [t.dia_id for t in conv.turns]
    assert "red kayak" in conv.turns[1].text
    assert (
        conv.turns[0].event_time < conv.turns[1].event_time < conv.turns[2].event_time
    )
    assert parse_when("10:37 am on 27 June, 2023") == conv.turns[2].event_time


def test_parser_normalises_question_evidence(locomo_file: Path) -> None:
    """Question evidence is split and de-padded; empty evidence stays empty."""
    [conv] = load_locomo(locomo_file)
    assert [("D1:1", "D2:1"), ("D1:2",), ()] == [q.evidence for q in conv.questions]


def test_missing_file_names_the_expected_place(tmp_path: Path) -> None:
    """A missing data file raises with a hint to pass --data."""
    with pytest.raises(FileNotFoundError, match="--data"):
        load_locomo(tmp_path / "absent.json")


def test_malformed_evidence_ids_are_normalised() -> None:
    """Joined, padded, stray-colon and empty ids become canonical ids."""
    raw = ["D8:6; D9:17", "D30:05", "D", "D:11:26", "D9:1 D4:4", "D8:6"]
    assert ("D8:6", "D9:17", "D30:5", "D11:26", "D9:1", "D4:4") == normalise_evidence(
        raw
    )


@given(st.lists(st.text(max_size=30), max_size=5))
def test_normalisation_never_fails_and_is_idempotent(raw: list[str]) -> None:
    """Any input yields canonical ids, and normalising them again changes nothing."""
    once = normalise_evidence(raw)
    assert once == normalise_evidence(once)


def test_evidence_recall_is_the_share_of_evidence_found() -> None:
    """Recall counts each evidence turn found once, whatever else was returned."""
    assert 0.5 == evidence_recall(["D1:1", "D1:2"], ["D1:2", "D1:2", "D7:7"])


def test_budget_fill_skips_lines_that_do_not_fit() -> None:
    """Items are taken in order while they fit; a long one is skipped, not the rest."""
    lines = [("a", "x" * 15), ("b", "y" * 80), ("c", "z" * 10)]
    assert ["a", "c"] == fill_budget(lines, line_cost("x" * 15) + line_cost("z" * 10))


def test_rrf_rewards_agreement_between_rankings() -> None:
    """An item ranked well by both rankings beats one ranked first by only one."""
    assert "b" == rrf([["a", "b", "c"], ["c", "b", "a"], ["b"]])[0]


def test_bm25_baseline_ranks_the_turn_sharing_rare_words(locomo_file: Path) -> None:
    """The BM25 baseline puts the turn sharing the question's rare word first."""
    [conv] = load_locomo(locomo_file)
    index = RawTurnIndex(conv.turns, HashingEmbedder())
    assert "D1:2" == index.rank("bm25", "the kayak photo")[0]


def test_conversation_ranges_parse() -> None:
    """Ranges and lists of conversation indexes parse to sorted indexes."""
    assert [0, 2, 5, 6, 7] == parse_range("5-7,0,2")


def test_answer_coverage_counts_answer_words_the_question_lacks() -> None:
    """Coverage looks only for the answer's own content words, in the text read."""
    wanted = answer_words("Where does Ann work?", "Ann works at the Lisbon zoo")
    assert {"lisbon", "zoo"} == wanted
    assert 0.5 == answer_coverage(wanted, "- Ann: I feed the lions at the zoo")
    assert answer_coverage(set(), "anything") is None


def test_adversarial_questions_have_nothing_to_cover() -> None:
    """An adversarial question's stored answer is the trap, so it is not scored."""
    trap = Question("What did Bo adopt?", 5, ("D1:1",), "a puppy")
    plain = Question("What did Ann adopt?", 1, ("D1:1",), "a puppy")
    assert set() == gold_words(trap)
    assert {"puppi"} <= gold_words(plain) or {"puppy"} <= gold_words(plain)


def test_coverage_table_leaves_out_questions_without_a_value() -> None:
    """The coverage table averages only questions that have something to cover."""
    scores = [
        Score(0, 1, "hybrid", 250, 1.0, 1, 10, 0.5),
        Score(0, 5, "hybrid", 250, 0.0, 1, 10, None),
    ]
    cells = table(scores, 250, measure="coverage")["hybrid"]
    assert (0.5, 1.0) == (cells["overall"], cells["questions"])
    assert 0.5 == table(scores, 250)["hybrid"]["overall"]


def test_recent_baseline_returns_the_latest_turns(locomo_file: Path) -> None:
    """The recent-context baseline ranks turns newest first, whatever the question."""
    [conv] = load_locomo(locomo_file)
    index = RawTurnIndex(conv.turns, HashingEmbedder())
    assert ["D2:1", "D1:2", "D1:1"] == index.rank("recent", "the kayak photo")
    assert ["D2:1"] == index.retrieve(
        index.rank("recent", "x"), line_cost(index.lines["D2:1"])
    )


def _turn(dia_id: str, text: str, hours: float) -> DialogueTurn:
    return DialogueTurn(dia_id, "Ann", text, hours * 3600.0, 1)


def test_stream_baseline_weighs_recency_importance_and_relevance() -> None:
    """Equal relevance: the memory stream prefers the newer and more salient turn."""
    turns = [
        _turn("old", "ok", 0.0),
        _turn("new", "I love hiking in the Harz", 10.0),
        _turn("mid", "I like tea", 5.0),
    ]
    priors = stream_priors(turns)
    assert priors[1] == max(priors) and priors[0] == min(priors)
    index = RawTurnIndex(turns, HashingEmbedder())
    assert "new" == index.rank("stream", "zzz unrelated")[0]
    assert "mid" == index.rank("stream", "I like tea")[0]
