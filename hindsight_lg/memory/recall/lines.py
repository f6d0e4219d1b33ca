"""What a recalled line shows: the matched fragment in its turn's words, once.

An event is one sentence split from what someone said; the words that
answer a question are often in the sentence beside the one that matched
("I went to a pottery class yesterday. We made bowls!"). Three rules decide
the text of a line, and none depends on the conversation's shape:

* **The turn around the fragment.** A memory that keeps its source turn
  (``meta["turn"]``, written at capture) shows the fragment with the
  sentences beside it, the next one first, within a character allowance;
  gaps are marked ``…``. A memory without it (a turn of one sentence, a
  consolidated or hand-written memory) shows its own text.
* **Fragments of one turn merged.** A fragment whose words a line already
  shows is not given a line of its own (it is cut as ``"merged"``).
* **Near-duplicates dropped.** A line whose content words are nearly all
  in one line already chosen ("Long time no talk!" after "Long time no
  see, so much to talk about!") adds nothing a model can use.

Cost: one sentence split per chosen line and a set comparison against the
lines already chosen (tens of lines: negligible beside the search).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from hindsight_lg._text import inert, one_visible_line, terms
from hindsight_lg.model import TURN_KEY, Kind, MemoryRecord, Status, to_datetime

_DAY_S = 86400.0
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？])")
# A line repeating this share of one earlier line's content words adds nothing.
NEAR_DUPLICATE = 0.8
# Numbers and capitalised words past a line's first word: facts that differ
# in these are different facts.
_KEY = re.compile(r"\d+(?:[.:,/-]\d+)*|(?<=[^\s.!?]\s)[A-Z][\w'-]*")
Words = tuple[set[str], set[str]]


def _spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (whitespace between dropped)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(text):
        if m.start() > start:
            spans.append((start, m.start()))
        start = m.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def turn_window(record: MemoryRecord, max_chars: int) -> str | None:
    """The fragment with the sentences of its turn around it, within ``max_chars``.

    The next sentence is added before the previous one (an answer's detail
    tends to follow what matched), then they alternate while they fit.
    Chatter around the fragment ("Thanks, Mel!", "Wow, that's awesome!",
    "哈哈"; :func:`chatter`) is passed over, its place marked ``…``, so the
    allowance goes to sentences that say something. ``None`` when the record
    keeps no turn or its text is not in it.

    Example:
        >>> rec = MemoryRecord(namespace="u", content="I went to a pottery class.")
        >>> rec.meta["turn"] = "Guess what! I went to a pottery class. We made bowls."
        >>> turn_window(rec, 45)
        '… I went to a pottery class. We made bowls.'
        >>> rec.meta["turn"] = "I went to a pottery class. Wow, so cool! We made bowls."
        >>> turn_window(rec, 45)
        'I went to a pottery class. … We made bowls.'
    """
    turn = record.meta.get(TURN_KEY)
    if not isinstance(turn, str) or max_chars <= 0:
        return None
    text = " ".join(turn.split())
    content = " ".join(record.content.split())
    at = text.find(content) if content else -1
    if at < 0:
        return None
    if len(text) <= max_chars:
        return text
    spans = _spans(text)
    first = next(i for i, (_, e) in enumerate(spans) if e > at)
    last = next(
        (i for i, (s, _) in enumerate(spans) if s >= at + len(content)), len(spans)
    )
    lo, hi = first, max(first + 1, last)
    if spans[hi - 1][1] - spans[lo][0] > max_chars:
        return None
    said = [not chatter(text[a:b]) for a, b in spans]
    kept = _grow(spans, said, lo, hi, max_chars)
    return _joined(text, spans, kept)


def _grow(
    spans: Sequence[tuple[int, int]],
    said: Sequence[bool],
    lo: int,
    hi: int,
    max_chars: int,
) -> list[int]:
    """Sentences ``[lo, hi)`` and those beside them, next one first, while they fit.

    A sentence that is chatter (``said`` false) is passed over: the side
    grows past it, and its place costs a gap mark instead of its words.
    """
    kept = list(range(lo, hi))
    size = spans[hi - 1][1] - spans[lo][0]
    grew = True
    while grew:
        grew = False
        while hi < len(spans) and not said[hi]:
            hi += 1
        if hi < len(spans) and (add := _cost(spans, hi, kept[-1])) + size <= max_chars:
            kept.append(hi)
            size, hi, grew = size + add, hi + 1, True
        while lo > 0 and not said[lo - 1]:
            lo -= 1
        if lo > 0 and (add := _cost(spans, lo - 1, kept[0])) + size <= max_chars:
            kept.insert(0, lo - 1)
            size, lo, grew = size + add, lo - 1, True
    return kept


def _cost(spans: Sequence[tuple[int, int]], new: int, beside: int) -> int:
    """Characters sentence ``new`` adds beside the kept sentence ``beside``:
    its own and the space between, or its own and a gap mark for the
    chatter passed over between them."""
    if new == beside + 1:
        return spans[new][1] - spans[beside][1]
    if new == beside - 1:
        return spans[beside][0] - spans[new][0]
    return len(" … ") + spans[new][1] - spans[new][0]


def _joined(text: str, spans: Sequence[tuple[int, int]], kept: Sequence[int]) -> str:
    """The kept sentences in order; ``…`` for each run of sentences left out."""
    runs: list[list[int]] = []
    for i in kept:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    body = " … ".join(text[spans[r[0]][0] : spans[r[-1]][1]] for r in runs)
    head = "… " if kept[0] > 0 else ""
    tail = " …" if kept[-1] < len(spans) - 1 else ""
    return f"{head}{body}{tail}"


# Words of social talk, as terms() stems them: a sentence of nothing else
# (and the names it addresses) says nothing a question could ask about.
_CHATTER_WORDS = frozenset(
    """thank much wow awesome amaz sound happy total congrat congratulation good
    luck great cool agree doing keep nice glad hey hi hello haha lol yeah yes
    yep ok okay sure wonderful fantastic incredible super really sorry hear
    long time see talk soon bye care lot mean means omg oh ah aw awww hope
    well definite absolute right true exact same too glad appreciate welcome
    fun love like wish best excit interest cute beautiful lovely brilliant
    perfect enjoy""".split()
)
_CHATTER_ZH = re.compile(
    r"^(?:谢谢你?|多谢|哈+|嘿+|嗯+|哇+|好的?|太棒了|加油|不错|真棒|是的|对的?|没错|"
    r"厉害|恭喜|晚安|早安?|拜拜|再见|[，,！!。.~～？?\s])+$"
)
_NAME = re.compile(r"\b[A-Z][a-z]+\b")


@functools.lru_cache(maxsize=8192)
def chatter(sentence: str) -> bool:
    """Whether ``sentence`` is social talk only: thanks, greetings, praise.

    Example:
        >>> chatter("Thanks so much, Mel!"), chatter("Wow, that's awesome!")
        (True, True)
        >>> chatter("We made bowls."), chatter("哈哈，太棒了！")
        (False, True)
    """
    # Cached: every recall renders the windows of a tenant's same few turns.
    if not sentence.isascii():
        return bool(_CHATTER_ZH.match(sentence.strip()))
    names = {n.casefold() for n in _NAME.findall(sentence)}
    words = [t for t in terms(sentence) if t not in names]
    return all(t in _CHATTER_WORDS for t in words)


def shown_already(text: str, shown: Sequence[str]) -> bool:
    """Whether a line's ``text`` is within a line already shown (a merged fragment)."""
    flat = " ".join(text.split())
    return any(flat and flat in s for s in shown)


def near_duplicate(words: Words, chosen: Sequence[Words]) -> bool:
    """Whether ``words`` repeat one of the ``chosen`` lines' (:func:`content_words`).

    Nearly all of the line's terms must be in the earlier line, and every
    number and name of it too: "milestone 3" after "milestone 4" is another
    fact, however alike the sentences read.

    Example:
        >>> old = content_words("Long time no talk, Mel!")
        >>> near_duplicate(content_words("Long time no talk!"), [old])
        True
        >>> near_duplicate(content_words("Milestone 3 ships"), [content_words("Milestone 4 ships")])
        False
    """
    mine, keys = words
    if not mine:
        return False
    return any(
        keys <= c_keys and len(mine & c_terms) >= NEAR_DUPLICATE * len(mine)
        for c_terms, c_keys in chosen
    )


def content_words(text: str) -> Words:
    """A line's terms, and its numbers and capitalised names (which must match)."""
    keys = {w.casefold() for w in _KEY.findall(text)}
    return set(terms(text)), keys


def speakers(record: MemoryRecord) -> str:
    """`` Anna,Tom:`` before a line's text: who spoke, inert; empty when nobody is named."""
    return _speakers(tuple(record.participants))


@functools.lru_cache(maxsize=4096)
def _speakers(participants: tuple[str, ...]) -> str:
    # A tenant's memories name a handful of people: one rendering per set of
    # them, not two per candidate line of every recall.
    names = ",".join(n for n in (inert(p) for p in participants) if n)
    return f" {names}:" if names else ""


def compact_head(record: MemoryRecord, when: str) -> str:
    """A compact line's annotations: the date (``when``; empty under a day's
    heading), the kind unless a plain event, the confidence unless certain, a
    status unless active, who spoke."""
    kind = "" if record.kind is Kind.EVENT else f" {record.kind.value}"
    conf = "" if record.confidence >= 1.0 else f" conf {record.confidence:.1f}"
    status = "" if record.status is Status.ACTIVE else f" ({record.status.value})"
    inner = f"{when}{kind}{conf}".strip()
    bracket = f" [{inner}]" if inner else ""
    return f"-{bracket}{status}{speakers(record)} "


def full_head(record: MemoryRecord, when: str) -> str:
    """A full line's annotations: kind, date (``when``; empty under a day's
    heading), confidence, source, id, status, who spoke."""
    status = "" if record.status is Status.ACTIVE else f" ({record.status.value})"
    dated = f" · {when}" if when else ""
    return (
        f"- [{record.kind.value}{dated} · conf {record.confidence:.1f} · "
        f"{record.source_kind.value} · id {inert(record.id[:8])}]{status}"
        f"{speakers(record)} "
    )


def annotated_line(
    record: MemoryRecord, text: str, *, full: bool, compact: bool, dated: bool = True
) -> str:
    """``text`` behind ``record``'s annotations (:func:`~.result.render_line`'s header).

    ``dated=False`` leaves the date out, for a line under its day's heading
    (:func:`dated_block`).
    """
    return headed_line(record, inert(text), compact=compact, dated=dated)


def headed_line(
    record: MemoryRecord, shown: str, *, compact: bool, dated: bool = True
) -> str:
    """:func:`annotated_line` of text already made inert (``shown``).

    Assembly builds two lines of each chosen memory (under its day's heading
    and dated) from one inert text.
    """
    when = spoken_date(record.event_time) if dated else ""
    head = compact_head(record, when) if compact else full_head(record, when)
    # Every stored field is inert by now (the enums and numbers are ours):
    # neutralising the whole line again is a no-op that holds for any field a
    # later change adds.
    return neutralise(head + shown)


def day_heading(when: str) -> str:
    """The heading of one day's lines in a prompt (:func:`dated_block`)."""
    return f"{when}:"


def dated_block(lines: Sequence[tuple[str, str]]) -> str:
    """``(day, undated line)`` pairs as the prompt shows them: each day once.

    A date costs about four tokens a line, and the lines of one recall often
    share a day (several things said in one conversation): each day's heading
    is written once, above its lines, and the budget this saves goes to more
    words. Days come in the order of their best line; a day's lines keep
    their rank order.

    Example:
        >>> print(dated_block([("8 May 2023", "- Ann: a"), ("1 June 2023", "- b"),
        ...                    ("8 May 2023", "- c")]))
        8 May 2023:
        - Ann: a
        - c
        1 June 2023:
        - b
    """
    days: dict[str, list[str]] = {}
    for day, line in lines:
        days.setdefault(day, []).append(neutralise(line))
    return "\n".join(
        row
        for day, rows in days.items()
        for row in (neutralise(day_heading(day)), *rows)
    )


def neutralise(line: str) -> str:
    """``line`` on one visible line with no ``<`` or ``>``; idempotent on inert text."""
    return one_visible_line(line).replace("<", "&lt;").replace(">", "&gt;")


def least_chars(
    when: str, record: MemoryRecord, full: bool = False, new_day: bool = True
) -> int:
    """Characters of the shortest line of ``record`` rendered ``full`` or compact,
    its newline included.

    Its annotations, and its text unless a summary may stand in for it: a
    full line, and any line of a memory without a summary, shows the
    memory's words (within its turn's or alone), and printable ASCII loses
    no character on the way, plus its day's heading when ``new_day`` (no
    line shows that day yet). Assembly cuts a memory as over budget without
    rendering it (a window, a focused summary) when not even this fits; a
    deep pool has many of those.
    """
    head = full_head(record, "") if full else compact_head(record, "")
    flat = " ".join(record.content.split()) if full or not record.summary else ""
    if not (flat.isascii() and flat.isprintable()):
        flat = ""
    return len(one_visible_line(head + flat)) + 1 + day_chars(when, new_day)


def day_chars(when: str, new_day: bool) -> int:
    """Characters a line adds for its day: its heading's, if no line shows the day yet."""
    return len(day_heading(when)) + 1 if new_day else 0


def spoken_date(when: float) -> str:
    """A date as people write it, ``8 May 2023``: questions and answers use these words.

    Example:
        >>> spoken_date(1683504000.0)
        '8 May 2023'
    """
    return _spoken_day(int(when // _DAY_S))


@functools.lru_cache(maxsize=4096)
def _spoken_day(day: int) -> str:
    # A UTC day is a whole number of POSIX days: one rendering per day, not
    # two per candidate line of every recall.
    at = to_datetime(day * _DAY_S)
    return f"{at.day} {at.strftime('%B')} {at.year}"
