"""Compact rendering, source novelty, rank fusion and acknowledgement filtering."""

from __future__ import annotations

from hindsight_lg.memory.encode import extract
from hindsight_lg.memory.model import MemoryRecord
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import (
    Candidate,
    assemble,
    fuse_ranks,
    novel_first,
    render_line,
)


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
    assert line == "- [2023-11-14] Ann: I adopted a puppy"
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
