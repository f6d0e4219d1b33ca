"""The long-chat bench on a tiny synthetic chat in RealMem's format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.bench.baselines import line_cost
from hindsight_lg.bench.longchat import load_longchat, load_longchats, parse_day
from hindsight_lg.bench.longchat_eval import (
    CHUNKS,
    SYSTEM,
    TURNS,
    ChatQuery,
    ChatRun,
    updated_first,
)
from hindsight_lg.bench.longchat_evidence import source_index
from hindsight_lg.bench.longchat_index import (
    CHUNK_CHARS,
    GrowingIndex,
    Item,
    chunk_items,
)
from hindsight_lg.bench.longchat_report import table
from hindsight_lg.bench.longchat_run import LongChatConfig, load_scores, run_longchat
from hindsight_lg.cli import main
from hindsight_lg.embeddings import HashingEmbedder

BAKERY = "I run a bakery in Lyon called Petit Four."
OVEN_OLD = "My budget for the new oven is 3000 euros."
OVEN_NEW = "Update: the oven budget is now 4500 euros after the grant came through."
SECRET = "The secret ingredient in my croissants is cardamom."
MARKETING = (
    "For the bakery, I would start with Instagram marketing built around seasonal "
    "pastries: post the morning bake, show the ovens, and tell the story of each "
    "recipe. " * 12
)


def _turn(speaker: str, content: str, **extra: Any) -> dict[str, Any]:
    return {"speaker": speaker, "content": content, "is_query": False, **extra}


def _query(text: str, category: str, qid: str) -> dict[str, Any]:
    extra = {"query_id": qid, "category_name": category}
    return _turn("User", text, **{**extra, "is_query": True})


def _point(uuid: str, content: str) -> dict[str, str]:
    return {"session_uuid": uuid, "content": content}


def _memory(content: str, turn: int, snapshot: str, uuid: str) -> dict[str, Any]:
    return {
        "content": content,
        "source_turn": turn,
        "source_content_snapshot": snapshot,
        "session_uuid": uuid,
    }


INSTAGRAM = "【Business】 AI suggested Instagram marketing with seasonal pastries."
SHOP = "【Business】 User runs a bakery in Lyon called Petit Four."
BUDGET_OLD = "【Finance】 Oven budget is 3000 euros."
BUDGET_NEW = "【Finance】 Oven budget raised to 4500 euros."
CARDAMOM = "【Recipe】 Secret croissant ingredient is cardamom."


def _sessions() -> list[dict[str, Any]]:
    a0 = {
        "session_uuid": "a0",
        "current_time": "2026-01-01 (Thursday)",
        "dialogue_turns": [
            _turn("User", BAKERY),
            _turn("Assistant", MARKETING),
            _turn("User", OVEN_OLD),
            _turn("Assistant", "Noted: 3000 euros for the oven."),
        ],
        "extracted_memory": [
            _memory(SHOP, 1, BAKERY, "a0"),  # 1-based
            _memory(BUDGET_OLD, 2, OVEN_OLD, "a0"),  # 0-based
            _memory(INSTAGRAM, -1, "", "a0"),  # no snapshot
        ],
    }
    b1 = {
        "session_uuid": "b1",
        "current_time": "2026-01-05 (Monday)",
        "dialogue_turns": [
            _turn("User", OVEN_NEW),
            _turn("Assistant", "Got it: 4500 euros for the oven now."),
        ],
        # The dialogue was edited after extraction: the snapshot is not a turn.
        "extracted_memory": [
            _memory(BUDGET_NEW, 1, "Update: oven budget now 4500 euros.", "b1")
        ],
    }
    reply = _turn("Assistant", "Instagram with seasonal pastries, as we said.")
    reply["memory_used"] = [
        _point("a0", INSTAGRAM),
        _point("a0", SHOP),
        _point("c2", CARDAMOM),  # its own session: unreachable
    ]
    c2 = {
        "session_uuid": "c2",
        "current_time": "2026-01-09 (Friday)",
        "dialogue_turns": [
            _query(
                "Which marketing ideas suit my bakery?", "Dynamic Incremental", "Q1"
            ),
            reply,
            _turn("User", SECRET),
            _turn("Assistant", "Cardamom is a lovely choice."),
        ],
        "extracted_memory": [_memory(CARDAMOM, 3, SECRET, "c2")],
    }
    answer = _turn("Assistant", "You can spend 4500 euros on the oven.")
    answer["memory_used"] = [_point("a0", BUDGET_OLD), _point("b1", BUDGET_NEW)]
    d3 = {
        "session_uuid": "d3",
        "current_time": "2026-01-09 (Friday)",
        "dialogue_turns": [
            _query("How much can I spend on the oven?", "Dynamic Updating", "Q2"),
            answer,
        ],
        "extracted_memory": [],
    }
    return [a0, b1, c2, d3]


@pytest.fixture
def chat_file(tmp_path: Path) -> Path:
    path = tmp_path / "Ann_dialogues_256k.json"
    data = {"_metadata": {"person_name": "Ann"}, "dialogues": _sessions()}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_sessions_keep_file_order_dates_and_turn_ids(chat_file: Path) -> None:
    """Turns are ``<uuid>:<index>``; sessions of one day start apart, in file order."""
    chat = load_longchat(chat_file)
    assert ["a0", "b1", "c2", "d3"] == [s.uuid for s in chat.sessions]
    assert ["a0:0", "a0:1", "a0:2", "a0:3"] == [
        t.dia_id for t in chat.sessions[0].turns
    ]
    assert ("User", "Assistant") == (chat.turns[0].speaker, chat.turns[1].speaker)
    c2, d3 = chat.sessions[2], chat.sessions[3]
    assert parse_day("2026-01-09 (Friday)") < c2.start < d3.start < c2.start + 86400


def test_evidence_follows_snapshots_and_drops_the_own_session(chat_file: Path) -> None:
    """Snapshot text decides, -1 goes to the turn with most words, own session dropped."""
    q1, q2 = load_longchat(chat_file).queries
    assert ("a0:1", "a0:0") == q1.evidence  # Instagram (-1), then the shop (1-based)
    assert ("a0:2", "b1:0") == q2.evidence  # 0-based; an edited turn by its words
    assert "cardamom" not in q1.points.lower() and "Business" not in q1.points
    assert q1.answer.startswith("Instagram") and "Dynamic Incremental" == q1.category


def test_dynamic_updating_splits_the_latest_session_from_older_ones(
    chat_file: Path,
) -> None:
    """The latest evidence session holds the updated value, earlier ones the old."""
    q1, q2 = load_longchat(chat_file).queries
    assert (q2.updating, q2.updated, q2.old) == (True, ("b1:0",), ("a0:2",))
    assert (q1.updating, q1.updated, q1.old) == (False, (), ())


def test_updated_value_counts_only_when_ranked_above_the_old_one() -> None:
    """Shown first scores 1, shown after or not at all 0, no old value no score."""
    q = ChatQuery("q", "now?", "Dynamic Updating", "s", updated=("n",), old=("o",))
    assert 1.0 == updated_first(q, ["x", "n", "o"])
    assert 1.0 == updated_first(q, ["n"])
    assert 0.0 == updated_first(q, ["o", "n"])
    assert 0.0 == updated_first(q, ["o"])
    assert updated_first(ChatQuery("q", "now?", "Dynamic Updating", "s"), ["n"]) is None


def test_protocol_never_shows_a_question_its_own_or_later_sessions(
    chat_file: Path, tmp_path: Path
) -> None:
    """Every system answers from earlier sessions only, yet those are all captured."""
    cfg = LongChatConfig(chat_file, embedder="hashing", out=tmp_path / "o", cache=False)
    run = run_longchat(cfg)
    earlier = {"Q1": ("a0", "b1"), "Q2": ("a0", "b1", "c2")}
    assert 6 == len(run.scores)
    for s in run.scores:
        assert all(t.split(":")[0] in earlier[s.query] for t in s.found), s
        assert s.tokens <= 500
    q2 = [s for s in run.scores if s.query == "Q2"]
    assert all(any(t.startswith("b1:") for t in s.found) for s in q2)
    assert 4 == run.sessions["Ann"]


def test_whole_turn_baseline_skips_a_turn_too_long_for_the_budget() -> None:
    """The best turn does not fit, so the next ones that fit are shown instead."""
    index = GrowingIndex(HashingEmbedder())
    long = Item("t:0", "t:0", "User: the oven budget is 4500 euros. " + "x " * 400)
    short = Item("t:1", "t:1", "User: the stove was cheap")
    other = Item("t:2", "t:2", "User: we talked about bread")
    index.add([long, short, other])
    budget = line_cost(short.line) + line_cost(other.line)
    ranking = index.rank("oven budget")
    shown = [it.turn_id for it in index.retrieve("oven budget", budget)]
    assert ("t:0", ranking[1:]) == (ranking[0], shown)


def test_chunks_stay_short_and_count_as_their_turn(chat_file: Path) -> None:
    """A long reply becomes chunks of at most 600 characters, each naming its turn."""
    turns = load_longchat(chat_file).sessions[0].turns
    chunks = [c for c in chunk_items(turns) if c.turn_id == "a0:1"]
    assert len(chunks) > 1
    assert all(len(c.line) <= CHUNK_CHARS + len("Assistant: ") for c in chunks)
    index = GrowingIndex(HashingEmbedder())
    index.add(chunk_items(turns))
    shown = index.retrieve("Instagram marketing seasonal pastries", 300)
    assert "a0:1" == shown[0].turn_id
    assert sum(line_cost(it.line) for it in shown) <= 300


@given(
    turn=st.one_of(st.integers(-3, 8), st.none(), st.text(max_size=3)),
    snapshot=st.text(max_size=40),
    texts=st.lists(st.text(max_size=40), max_size=5),
)
def test_evidence_resolution_never_fails_on_odd_entries(
    turn: Any, snapshot: str, texts: list[str]
) -> None:
    """Any source_turn and snapshot yield a turn index in range, or none."""
    entry = {"source_turn": turn, "source_content_snapshot": snapshot, "content": "x"}
    found = source_index(entry, texts)
    assert found is None or 0 <= found < len(texts)


def test_cli_runs_end_to_end_and_merges(
    chat_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """bench longchat writes a report with every table and prints the headline."""
    out = tmp_path / "lc"
    argv = ["bench", "longchat", "--data", str(chat_file.parent), "--personas", "Ann"]
    assert 0 == main([*argv, "--embedder", "hashing", "--out", str(out), "--no-cache"])
    report = (out / "report.md").read_text()
    assert "## Ann, evidence recall, 500 tokens" in report
    assert "hindsight / better hybrid" in report
    assert "Dynamic Updating: updated value ranked first" in report
    assert "Ann, evidence recall" in capsys.readouterr().out
    merged = load_scores([out])
    assert {SYSTEM, TURNS, CHUNKS} == {s.system for s in merged.scores}
    assert 2 == len(merged.recall_ms)
    assert 0 == main(["bench", "longchat", "--merge", str(out), "--out", str(out)])


def test_cli_names_the_missing_data_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing --data path fails with its name and what to pass."""
    missing = tmp_path / "nowhere"
    argv = ["bench", "longchat", "--data", str(missing), "--out", str(tmp_path)]
    assert 0 != main([*argv, "--embedder", "hashing"])
    err = capsys.readouterr().err
    assert f"{missing} not found" in err and "--data" in err


def test_an_unknown_persona_is_refused(chat_file: Path) -> None:
    """Asking for a persona the data lacks names it and those present."""
    with pytest.raises(FileNotFoundError, match="Bob.*found: Ann"):
        load_longchats(chat_file.parent, ["Bob"])


def test_tables_leave_out_questions_without_a_value() -> None:
    """A question no earlier turn answers has no recall and stays out of its mean."""
    from hindsight_lg.bench.longchat_eval import ChatScore

    run = ChatRun(budget=500)
    run.scores = [
        ChatScore("Ann", "Q1", "Dynamic Incremental", SYSTEM, 500, 2, 40, recall=1.0),
        ChatScore("Ann", "Q2", "Dynamic Incremental", SYSTEM, 500, 3, 60),
    ]
    cells = table(run.scores, "recall")[SYSTEM]
    assert (1.0, 1.0) == (cells["overall"], cells["questions"])


MINIMAL = {
    "dialogues": [
        {
            "session_uuid": "s1",
            "current_time": "2026-03-01",
            "dialogue_turns": [
                {"speaker": "User", "content": "I moved to Lyon last week."},
                {"speaker": "Assistant", "content": "Congratulations on the move!"},
            ],
        },
        {
            "session_uuid": "s2",
            "current_time": "2026-03-08",
            "dialogue_turns": [
                {
                    "speaker": "User",
                    "content": "Which city do I live in now?",
                    "is_query": True,
                    "category_name": "single-hop",
                    "evidence": ["s1:0", "s2:1"],
                },
                {"speaker": "Assistant", "content": "You live in Lyon."},
            ],
        },
    ]
}


def test_a_minimal_chat_lists_its_evidence_turns_directly(tmp_path: Path) -> None:
    """Chats without memory points name evidence turns; later turns are dropped."""
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(MINIMAL), encoding="utf-8")
    chat = load_longchat(path)
    [q] = chat.queries
    assert ("mine", ("s1:0",), "You live in Lyon.") == (chat.name, q.evidence, q.answer)


def test_a_malformed_file_names_the_session_at_fault(tmp_path: Path) -> None:
    """A session without a date or without turns is refused with its position."""
    path = tmp_path / "bad.json"
    bad = {"dialogues": [{"session_uuid": "x", "dialogue_turns": []}]}
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(ValueError, match="session 0: unrecognised session date"):
        load_longchat(path)
    path.write_text(json.dumps({"dialogues": [{"dialogue_turns": "hi"}]}))
    with pytest.raises(ValueError, match="session 0 needs 'dialogue_turns'"):
        load_longchat(path)
