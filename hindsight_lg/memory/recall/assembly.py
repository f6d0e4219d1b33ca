"""Budgeted assembly: ranked candidates fitted to a token budget, line by line.

The top memories are shown in full, the rest compact; each line shows its
fragment in the words of its turn (:mod:`.lines`), and the block writes each
day once. The budget is counted in characters, as the prompt's token estimate
(``ceil(chars / 4)``) counts it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

from hindsight_lg._text import CHARS_PER_TOKEN, inert
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.current import EARLIER
from hindsight_lg.memory.recall.lines import (
    Words,
    content_words,
    day_chars,
    headed_line,
    least_chars,
    near_duplicate,
    shown_already,
    spoken_date,
)
from hindsight_lg.memory.recall.result import (
    HEADER,
    Candidate,
    RecalledMemory,
    line_text,
)
from hindsight_lg.memory.recall.scoring import final_breakdown
from hindsight_lg.model import MemoryRecord


def assemble(
    ranked: Sequence[Candidate],
    budget_tokens: int,
    k: int | None,
    policy: Policy,
    focus: Collection[str] = (),
    *,
    many: bool = False,
) -> tuple[list[RecalledMemory], int, dict[str, str]]:
    """Fit ranked candidates to the budget: top ones in full, the rest summarised.

    ``k=None`` lets the budget decide how many memories come back. Either
    way the list stops where what is left is clearly irrelevant: scores
    below ``policy.stop_below`` times the best one. Each line shows its
    fragment in the words of its turn; a fragment a line already shows, or
    a line that repeats an earlier one, is cut (:mod:`.lines`). Compact
    lines show a shorter window of their turn until ``policy.near_share`` of
    the budget is spent, and their fragment alone past it; for a question
    answered by several memories gathered together (``many``,
    :func:`~hindsight_lg.memory.language.asking.asks_for_many`) the share is
    ``policy.near_share_many`` and the window ``policy.turn_chars_near_many``:
    its answer is spread over more turns.

    The budget is counted in characters, as ``approx_tokens`` counts
    the prompt (``ceil(chars / 4)``): a line costs its characters and its
    newline, not a rounded-up token count of its own, so the block fills
    the budget rather than stopping a few percent short of it.
    """
    chars = budget_tokens * CHARS_PER_TOKEN
    fit = _Fit(chars - len(f"{HEADER}\n<memories>\n</memories>"), policy, focus)
    # The best compact lines show their turn's words too (policy.near_share).
    share, fit.near_chars = near_lines(policy, many=many)
    fit.near_budget = share * chars
    floor = policy.stop_below * max((c.score for c in ranked), default=0.0)
    full_budget = policy.full_text_share * chars
    for c in whole_turns_first(ranked, policy.whole_turns):
        if k is not None and len(fit.chosen) >= k:
            fit.cut[c.record.id] = "beyond k"
        elif c.score < floor:
            fit.cut[c.record.id] = "irrelevant"
        else:
            fit.take(c, fit.used_full < full_budget or not c.record.summary)
    used = math.ceil((chars - fit.left) / CHARS_PER_TOKEN) if fit.chosen else 0
    return fit.chosen, used, fit.cut


def near_lines(policy: Policy, *, many: bool) -> tuple[float, int]:
    """The share of the budget whose compact lines show their turn's words,
    and how many characters of it they show: a question gathering several
    memories has its own (``policy.near_share_many``, ``turn_chars_near_many``)."""
    if many:
        return policy.near_share_many, policy.turn_chars_near_many
    return policy.near_share, policy.turn_chars_near


class _Fit:
    """The lines chosen so far, what they show and the budget left (in characters)."""

    def __init__(self, left: int, policy: Policy, focus: Collection[str]) -> None:
        self.left = left
        self.policy = policy
        self.focus = focus
        self.used_full = 0
        # Tokens of every line so far, and up to how many compact lines
        # still show a window of their turn.
        self.used = 0
        self.near_budget = 0.0
        self.near_chars = policy.turn_chars_near
        self.chosen: list[RecalledMemory] = []
        self.cut: dict[str, str] = {}
        self.texts: list[str] = []
        self.words: list[Words] = []
        self.days: set[str] = set()

    def _render(
        self, record: MemoryRecord, full: bool, earlier: bool = False
    ) -> tuple[str, str, str]:
        """``record``'s text, that text made inert and its line under a day's heading.

        The dated line (:attr:`RecalledMemory.line`) is built only for a
        line that is chosen: most candidates of a deep pool are not.
        """
        p = self.policy
        if full:
            window = p.turn_chars_full
        elif self.used < self.near_budget:
            window = self.near_chars
        else:
            window = p.turn_chars
        text = line_text(record, full=full, focus=self.focus, window=window)
        shown = EARLIER + inert(text) if earlier else inert(text)
        return text, shown, headed_line(record, shown, compact=not full, dated=False)

    def take(self, c: Candidate, full: bool) -> None:
        """Add ``c``'s line if it shows something new and fits; else say why not.

        A line costs its tokens under its day's heading, and the heading's
        when no line chosen so far shows that day (:func:`~.lines.dated_block`).
        """
        record = c.record
        if shown_already(record.content, self.texts):
            # Shown within another line of its turn: returned, at no cost.
            self._add(c, "", False)
            return
        when = spoken_date(record.event_time)
        new_day = when not in self.days
        if (
            full
            and record.summary
            and least_chars(when, record, True, new_day) > self.left
        ):
            full = False  # its full line cannot fit: its summary may
        if least_chars(when, record, full, new_day) > self.left:
            self.cut[record.id] = "over budget"
            return
        earlier = bool(c.earlier_than)
        text, shown, undated = self._render(record, full, earlier)
        cost = len(undated) + 1 + day_chars(when, new_day)
        if cost > self.left and full and record.summary:
            full = False
            text, shown, undated = self._render(record, full, earlier)
            cost = len(undated) + 1 + day_chars(when, new_day)
        words = content_words(text)
        if self.policy.drop_near_duplicates and near_duplicate(words, self.words):
            self.cut[record.id] = "duplicate"
        elif cost > self.left:
            self.cut[record.id] = "over budget"
        else:
            self.left -= cost
            self.used += cost
            self.used_full += cost if full else 0
            self.texts.append(" ".join(text.split()))
            self.words.append(words)
            self.days.add(when)
            line = headed_line(record, shown, compact=not full)
            self._add(c, line, full, when, undated)

    def _add(
        self, c: Candidate, line: str, full: bool, day: str = "", undated: str = ""
    ) -> None:
        self.chosen.append(
            RecalledMemory(
                c.record,
                round(c.score, 4),
                dict(c.paths),
                line,
                full,
                final_breakdown(c),
                day,
                undated,
                c.earlier_than if line else "",
            )
        )


def whole_turns_first(ranked: Sequence[Candidate], turns: int) -> list[Candidate]:
    """The best ``turns`` turns whole, then the rest with repeated sources last.

    Events split from one message share its source ids. The first few
    hits are the likeliest to hold the answer, and its words are often in
    the sentence beside the one that matched ("I went to a pottery class.
    We made bowls."): each of the best ``turns`` memories is followed by
    the other events of its turn that recall found. Past them, a second
    event of a turn already shown adds less than a memory of another turn,
    so it only gets the budget that is left (:func:`novel_first`).
    """
    groups: dict[tuple[str, ...], list[Candidate]] = {}
    for c in ranked:
        key = tuple(sorted(c.record.source_ids)) or (c.record.id,)
        groups.setdefault(key, []).append(c)
    head_keys = list(groups)[:turns]
    head = [c for key in head_keys for c in groups[key]]
    taken = {id(c) for c in head}
    return head + novel_first([c for c in ranked if id(c) not in taken])


def novel_first(ranked: Sequence[Candidate]) -> list[Candidate]:
    """Ranked candidates, those repeating an already covered source moved last.

    Events split from one message share its source ids; a second event of a
    message already in the context adds less than a memory of another one,
    so it only gets the budget that is left. Order is kept within each group.
    """
    seen: set[str] = set()
    novel: list[Candidate] = []
    repeats: list[Candidate] = []
    for c in ranked:
        sources = set(c.record.source_ids)
        (repeats if sources and sources <= seen else novel).append(c)
        seen |= sources
    return novel + repeats
