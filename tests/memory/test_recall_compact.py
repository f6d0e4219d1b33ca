"""Compact rendering, source novelty, rank fusion and acknowledgement filtering."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg._text import focused_summary, summarize, terms
from hindsight_lg.memory.language.encode import extract
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.assembly import (
    assemble,
    novel_first,
    whole_turns_first,
)
from hindsight_lg.memory.recall.result import Candidate, line_text, render_line
from hindsight_lg.memory.recall.scoring import fuse_ranks
from hindsight_lg.model import MemoryRecord


def _record(text: str, *sources: str) -> MemoryRecord:
    return MemoryRecord(
        namespace="u",
        content=text,
        summary=text,
        participants=["Ann"],
        event_time=1.7e9,
        source_ids=list(sources),
    )


def test_compact_line_keeps_date_and_speaker_but_drops_ids() -> None:
    """A compact line shows the date and speaker, not the id or source annotation."""
    record = _record("I adopted a puppy", "D1:1")
    line = render_line(record, full=False, compact=True)
    assert line == "- [14 November 2023] Ann: I adopted a puppy"
    assert record.id[:8] in render_line(record, full=True)


def test_summarised_tail_of_a_recall_is_compact() -> None:
    """Past the full-text share, lines are compact; the first stays fully annotated."""
    ranked = [Candidate(_record(f"fact number {i}", f"D1:{i}")) for i in range(10)]
    chosen, _, _ = assemble(ranked, 200, 10, Policy(full_text_share=0.1))
    assert "conf 1.0" in chosen[0].line
    assert "conf" not in chosen[-1].line and len(chosen) > 2


def test_events_of_an_already_covered_turn_come_last() -> None:
    """A second event of a turn already in the context yields to other turns."""
    a1, a2, b = (_record("a1", "D1:1"), _record("a2", "D1:1"), _record("b", "D2:1"))
    order = novel_first([Candidate(a1), Candidate(a2), Candidate(b)])
    assert [a1.id, b.id, a2.id] == [c.record.id for c in order]


def test_the_best_turns_can_be_shown_whole() -> None:
    """With whole_turns, the best turn's other events follow it before other turns."""
    a1, b, a2, c = (
        _record("a1", "D1:1"),
        _record("b", "D2:1"),
        _record("a2", "D1:1"),
        _record("c", "D3:1"),
    )
    ranked = [Candidate(r) for r in (a1, b, a2, c)]
    order = whole_turns_first(ranked, 1)
    assert [a1.id, a2.id, b.id, c.id] == [x.record.id for x in order]
    assert [a1.id, b.id, c.id, a2.id] == [
        x.record.id for x in whole_turns_first(ranked, 0)
    ]


def test_the_budget_decides_how_many_unless_the_rest_is_irrelevant() -> None:
    """k=None fills the budget; memories far below the best score are cut."""
    ranked = [Candidate(_record(f"fact {i}", f"D1:{i}")) for i in range(30)]
    for i, c in enumerate(ranked):
        c.score = 1.0 if i < 25 else 0.05
    chosen, _, cut = assemble(ranked, 2000, None, Policy())
    assert 25 == len(chosen)
    assert {"irrelevant"} == {cut[c.record.id] for c in ranked[25:]}
    few, _, _ = assemble(ranked, 2000, 8, Policy())
    assert 8 == len(few)


def test_rank_fusion_favours_agreement_between_paths() -> None:
    """A memory both paths rank second beats one only dense ranks first."""
    policy = Policy(fusion_weights={"dense": 1.0, "lexical": 1.0})
    solo = Candidate(_record("solo"), paths={"dense": 0.9})
    both = Candidate(_record("both"), paths={"dense": 0.8, "lexical": 0.5})
    lex = Candidate(_record("lex"), paths={"lexical": 0.9})
    fuse_ranks([solo, both, lex], policy)
    assert both.fused == 1.0 and (solo.fused or 0) < 1.0


def test_acknowledgements_are_not_salient() -> None:
    """Thanks and greetings addressed by name fall below the salience threshold."""
    events = extract("Thanks, Melanie! I adopted a puppy.", speaker="Ann", ref_time=0.0)
    kept = [e.content for e in events.events if e.salience >= Policy().min_salience]
    assert ["I adopted a puppy."] == kept


CONSOLIDATED = (
    "I'm a big fan of pottery - the creativity and skill is awesome; I'm excited "
    "to see where pottery takes you; We went camping at the beach last summer and "
    "roasted marshmallows; The kids loved the dinosaur exhibit at the museum"
)


def test_a_summarised_line_shows_the_part_that_answers_the_query() -> None:
    """Past the first 120 characters, the part about camping is what is shown."""
    record = _record(CONSOLIDATED).replace(summary=summarize(CONSOLIDATED))
    focus = terms("Where did they go camping?")
    line = render_line(record, full=False, compact=True, focus=focus)
    plain = render_line(record, full=False, compact=True)
    assert ("camping at the beach" in line, "camping" in plain) == (True, False)
    assert len(line) <= len(plain) + 4


def test_a_line_without_a_matching_part_keeps_the_stored_summary() -> None:
    """No part shares a word with the query: the stored (maybe LLM) summary stays."""
    record = _record(CONSOLIDATED).replace(summary="Ann likes crafts and trips.")
    line = render_line(record, full=False, compact=True, focus=terms("weather?"))
    assert line.endswith("Ann: Ann likes crafts and trips.")


@given(st.lists(st.text(min_size=1, max_size=60), min_size=1, max_size=8), st.text())
def test_a_focused_summary_never_exceeds_its_size(parts: list[str], query: str) -> None:
    """Whatever the text and query, the extract fits the summary's size (plus marks)."""
    out = focused_summary(". ".join(parts), terms(query) or ["x"], 80)
    assert out is None or len(out) <= 80 + 4


def _turned(fragment: str, turn: str, source: str) -> MemoryRecord:
    record = _record(fragment, source)
    record.meta["turn"] = turn
    return record


def test_the_best_compact_lines_show_their_turn_and_the_tail_does_not() -> None:
    """Within near_share of the budget a compact line shows the sentence beside
    its fragment (where the answer's words often are); past it, the fragment alone."""
    ranked = [
        Candidate(
            _turned(
                f"I went to pottery class {i}.",
                f"I went to pottery class {i}. We made bowl number {i} there.",
                f"D{i}:1",
            )
        )
        for i in range(12)
    ]
    policy = Policy(full_text_share=0.0, near_share=0.3, turn_chars_near=250)
    chosen, _, _ = assemble(ranked, 400, None, policy)
    lines = [m.line for m in chosen]
    assert all(lines) and len(lines) > 6
    assert "conf" not in lines[0] and "bowl number 0" in lines[0]
    assert "bowl number" not in lines[-1]
    off = Policy(full_text_share=0.0, near_share=0.0)
    assert not any("bowl" in m.line for m in assemble(ranked, 400, None, off)[0])


def test_a_near_line_shows_more_of_a_consolidated_memory_than_its_summary() -> None:
    """A memory that keeps no turn (consolidated from several) shows up to the
    near lines' allowance of its parts; in the deeper tail, its short summary."""
    parts = [f"Joanna baked cake number {i} with berries" for i in range(8)]
    content = "; ".join(parts)
    record = MemoryRecord(
        namespace="u", content=content, summary=summarize(content), source_ids=["D1:1"]
    )
    near = line_text(record, full=False, focus=terms("cake berries"), window=250)
    tail = line_text(record, full=False, focus=terms("cake berries"), window=0)
    assert len(tail) <= 125 < len(near) <= 250
    assert sum(p in near for p in parts) > sum(p in tail for p in parts)


@given(
    text=st.text(max_size=80) | st.text(st.characters(max_codepoint=127), max_size=80),
    names=st.lists(st.text(max_size=12), max_size=3),
    when=st.floats(min_value=0, max_value=4e9),
    confidence=st.floats(min_value=0, max_value=1),
    window=st.sampled_from([0, 120, 250]),
    summary=st.sampled_from(["", "a short summary"]),
    around=st.sampled_from(["", "Guess what! {} We made bowls & cups."]),
)
def test_the_budget_shortcut_never_cuts_a_line_that_fits(
    text: str,
    names: list[str],
    when: float,
    confidence: float,
    window: int,
    summary: str,
    around: str,
) -> None:
    """Assembly skips rendering a memory whose shortest line exceeds what is left;
    no line of it, compact or full, in its turn's words or not, is shorter."""
    from hindsight_lg.memory.recall.lines import day_chars, least_chars, spoken_date

    record = MemoryRecord(
        namespace="u",
        content=text or "x",
        participants=names,
        event_time=when,
        confidence=confidence,
        summary=summary,
    )
    if around:
        record.meta["turn"] = around.format(record.content)
    when = spoken_date(record.event_time)
    for full, compact in ((False, True), (True, False)):
        line = render_line(
            record, full=full, compact=compact, window=window, dated=False
        )
        for new_day in (True, False):
            cost = len(line) + 1 + day_chars(when, new_day)
            assert least_chars(when, record, full, new_day) <= cost


@given(when=st.floats(min_value=-1e9, max_value=4e9))
def test_a_spoken_date_is_the_utc_day_of_its_time(when: float) -> None:
    """The calendar day of ``when`` in UTC, whichever second of the day it is."""
    from hypothesis import assume

    from hindsight_lg.memory.recall.lines import spoken_date
    from hindsight_lg.model import to_datetime

    assume(0.001 < when % 86400 < 86399.999)  # datetime rounds to microseconds
    day = to_datetime(when)
    assert spoken_date(when) == f"{day.day} {day.strftime('%B')} {day.year}"


def test_a_deep_pool_past_the_budget_returns_the_same_lines() -> None:
    """Candidates past the budget are cut as over budget, the lines that fit unchanged."""
    ranked = [
        Candidate(_record(f"I planted {n} tomatoes in the garden", f"D1:{n}"))
        for n in range(200)
    ]
    for i, c in enumerate(ranked):
        c.score = 1.0 - i / 400
    chosen, used, cut = assemble(ranked, 120, None, Policy())
    assert used <= 120
    assert [m.record.content for m in chosen] == [
        f"I planted {n} tomatoes in the garden" for n in range(len(chosen))
    ]
    assert len(chosen) + len(cut) == 200
    assert set(cut.values()) == {"over budget"}
