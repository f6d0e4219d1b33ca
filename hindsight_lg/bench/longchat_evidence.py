"""Which turns answer a long-chat question: RealMem's memory points made turn ids.

An answer lists the memory points it needs (``memory_used``: a session uuid
and the point's text). The point's session lists it again in
``extracted_memory`` with ``source_turn`` and ``source_content_snapshot``, the
text of the turn it came from. RealMem's protocol, followed here:

1. Find the point's entry in its session by its text.
2. The turn whose text is the snapshot is the evidence. The files mix 0- and
   1-based ``source_turn`` and some dialogues were edited after extraction,
   so the text decides; ``source_turn`` only narrows the search when no turn
   matches exactly: of its two readings, the turn holding the larger share of
   the snapshot's words (the 1-based reading on a tie: the edited turns seen
   all follow it), else the best such turn of the session.
3. A point without a snapshot (``source_turn`` -1) belongs to the turn
   holding the largest share of the point's own words.

A turn must hold at least :data:`MIN_SHARE` of the words to count: a few
points (schedule items such as "Review Week 1 plan (Postponed)") are filed
under a session that never mentions them, and no turn answers them. Points in
the question's own session, or a later one, are dropped by the caller: they
are not in memory when the question is asked.

A query turn may also list turn ids directly (``"evidence": ["<uuid>:<i>"]``),
for chats brought without extracted memory points.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from hindsight_lg._text import terms
from hindsight_lg.bench.locomo import DialogueTurn

# A turn must hold this share of a point's words to be its source.
MIN_SHARE = 0.25
_UNKNOWN = 1 << 30
_TAG = re.compile(r"^\s*(?:【[^】]*】\s*)+")


def point_text(point: dict[str, Any]) -> str:
    """A memory point's text without its leading 【topic】 tags.

    Example:
        >>> point_text({"content": "【Travel Plan】 Flights LHR to Altay"})
        'Flights LHR to Altay'
    """
    return _TAG.sub("", str(point.get("content", ""))).strip()


class Located:
    """The sessions of one chat, found by uuid, with their turns and memory points.

    Example:
        >>> turn = DialogueTurn("s1:0", "User", "I moved to Lyon", 0.0, 0)
        >>> located = Located([{"extracted_memory": []}], ["s1"], [(turn,)])
        >>> located.position("s1:0"), located.resolve({"session_uuid": "s1",
        ...     "content": "User moved to Lyon"})
        (0, 's1:0')
    """

    def __init__(
        self,
        raw: Sequence[dict[str, Any]],
        uuids: Sequence[str],
        turns: Sequence[Sequence[DialogueTurn]],
    ) -> None:
        self.raw = raw
        self.uuids = list(uuids)
        self.turns = turns
        # A uuid seen twice keeps its first session, as ids are resolved there.
        self._where = {u: i for i, u in reversed(list(enumerate(uuids)))}

    def position(self, turn_or_session: str) -> int:
        """The file position of a session (by uuid or turn id); huge when unknown."""
        uuid = turn_or_session.rsplit(":", 1)[0] if ":" in turn_or_session else ""
        found = self._where.get(turn_or_session, self._where.get(uuid))
        return _UNKNOWN if found is None else found

    def before(self, point: dict[str, Any], position: int) -> bool:
        """Whether ``point``'s session comes before the session at ``position``."""
        return self.position(str(point.get("session_uuid", ""))) < position

    def has(self, turn_id: str) -> bool:
        """Whether ``turn_id`` names a turn of this chat."""
        pos = self.position(turn_id)
        return pos != _UNKNOWN and any(t.dia_id == turn_id for t in self.turns[pos])

    def resolve(self, point: dict[str, Any]) -> str | None:
        """The id of the turn ``point`` came from, or ``None`` when none holds it."""
        pos = self.position(str(point.get("session_uuid", "")))
        if pos == _UNKNOWN:
            return None
        texts = [t.text for t in self.turns[pos]]
        entry = _entry(self.raw[pos], str(point.get("content", "")))
        index = source_index(entry or {"content": point.get("content", "")}, texts)
        return None if index is None else self.turns[pos][index].dia_id


def _entry(session: dict[str, Any], content: str) -> dict[str, Any] | None:
    for entry in session.get("extracted_memory") or []:
        if isinstance(entry, dict) and str(entry.get("content", "")) == content:
            return entry
    wanted = content.strip()
    for entry in session.get("extracted_memory") or []:
        if isinstance(entry, dict) and str(entry.get("content", "")).strip() == wanted:
            return entry
    return None


def source_index(entry: dict[str, Any], texts: Sequence[str]) -> int | None:
    """Index of the turn (of ``texts``) an ``extracted_memory`` entry came from.

    Example:
        >>> texts = ["Hi", "I sold the car for 4k", "Nice"]
        >>> entry = {"source_turn": 2, "source_content_snapshot": "I sold the car"}
        >>> source_index(entry, texts)
        1
    """
    snapshot = str(entry.get("source_content_snapshot") or "").strip()
    if snapshot and snapshot in texts:
        return texts.index(snapshot)
    words = snapshot or point_text(entry)
    readings = _readings(entry.get("source_turn"), len(texts)) if snapshot else []
    for pool in (readings, range(len(texts))):
        found = best_turn(words, texts, pool)
        if found is not None:
            return found
    return None


def _readings(source_turn: Any, count: int) -> list[int]:
    """The turn indexes ``source_turn`` may mean: 1-based first, then 0-based."""
    if isinstance(source_turn, bool) or not isinstance(source_turn, int):
        return []
    return [i for i in (source_turn - 1, source_turn) if 0 <= i < count]


def best_turn(words: str, texts: Sequence[str], pool: Iterable[int]) -> int | None:
    """The turn of ``pool`` holding the largest share of ``words`` (first on a tie).

    ``None`` when no turn holds :data:`MIN_SHARE` of them.

    Example:
        >>> best_turn("sold the red car", ["a red bike", "sold my red car"], [0, 1])
        1
    """
    wanted = set(terms(words))
    if not wanted:
        return None
    best, share = None, MIN_SHARE
    for i in pool:
        have = len(wanted & set(terms(texts[i]))) / len(wanted)
        if have >= share and (best is None or have > share):
            best, share = i, have
    return best


def query_evidence(
    points: Sequence[dict[str, Any]], listed: Iterable[Any], located: Located
) -> tuple[str, ...]:
    """Evidence turn ids of a question: its points resolved, then ids it lists.

    Order kept, duplicates and unresolvable points dropped.
    """
    found = [located.resolve(p) for p in points]
    found += [str(i) for i in listed if located.has(str(i))]
    return tuple(dict.fromkeys(i for i in found if i is not None))


def split_updates(
    evidence: Sequence[str], located: Located
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(updated, old)``: evidence of the latest session, and of the earlier ones.

    RealMem does not say which point holds the changed value; the latest
    session's point is taken to be the update, the earlier ones what it
    replaced. Evidence from one session only gives no pair (``old`` empty).

    Example:
        >>> turns = [(DialogueTurn("a:0", "User", "x", 0.0, 0),),
        ...          (DialogueTurn("b:0", "User", "y", 1.0, 1),)]
        >>> split_updates(["a:0", "b:0"], Located([{}, {}], ["a", "b"], turns))
        (('b:0',), ('a:0',))
    """
    if not evidence:
        return (), ()
    latest = max(located.position(e) for e in evidence)
    updated = tuple(e for e in evidence if located.position(e) == latest)
    old = tuple(e for e in evidence if located.position(e) != latest)
    return updated, old
