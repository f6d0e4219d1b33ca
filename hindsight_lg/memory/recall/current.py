"""The latest of a speaker's statements on what a question asks comes first.

Capture supersedes the changes of mind it recognises; one said in words it
does not know ("Everything's in Obsidian now" after "I keep my notes in
Notion") leaves both statements active, and the older may rank first. So at
read time, whatever the write path decided: among the first
``policy.newest_first_window`` memories that bear on the query directly
(:mod:`.relevance`), a later statement by the same speaker that ranks below
an earlier one *on the same subject* moves up to the earlier one's place,
and the earlier one is marked ``(earlier)`` in the prompt, under its day's
heading. The model sees a change of mind in the order it happened and
decides whether the two disagree; nothing is dropped.

The later statement need not answer the question by itself: said in other
words ("Everything's in Obsidian now" for "What note-taking app do I use?") it
may have been cut as unrelated. With ``policy.newest_first_joins`` one such
statement rides on the best answer, as a multi-hop answer rides on a graph
link (its support is ``via earlier``). Off by default: on long chats the
joined line was more often on another subject than a change of mind, and a
join for every line of the window cost 1.1 points of LoCoMo answer coverage.

Same subject: the earlier one answers the question, the two are closer to
each other than unrelated statements come with this embedder (their cosine
clears the floor only ``policy.newest_first_false_rate`` of unrelated pairs
of statements reach: :mod:`.calibration`, ``statements:<script>``; Chinese
beside English takes the higher floor), and each is among the other's
``policy.newest_first_neighbours`` nearest memories by that person in the
recall's pool (:class:`_Neighbours`). Not moved:

* a later statement that asks, supposes or reports someone else's words
  ("thinking about trying Helix", "Bob said he moved": ``aside``), or is
  social talk only ("That's so cute!": :func:`.lines.chatter`);
* one scoring under ``policy.newest_first_share`` of the earlier one;
* anything above a memory in the time window the query names ("what did I
  do last month?" asks for then, not for the latest);
* memories said by different speakers ("Where does Maya live?" is not
  answered by Tom's later move), unless the earlier one names the later
  speaker (Tom's "Maya lives in Leeds", then Maya's "I'm in York"), linked to the query only through another
  memory (``via graph``), or without stored vectors to compare.

Cost: the mark, 10 characters a marked line, and a few dot products; no
search, no model call.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.calibration import Spread, script_of
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.model import MemoryRecord

#: What the prompt shows before a line said before a later one placed above it.
EARLIER = "(earlier) "


def newest_first(
    kept: Sequence[Candidate],
    policy: Policy,
    spread: Spread,
    cut: Sequence[Candidate] = (),
) -> list[Candidate]:
    """``kept`` with later statements moved above a speaker's earlier ones.

    ``cut`` are the candidates the relevance rule cut, best first: a later
    statement among them joins (``support`` ``"via earlier"``). Sets
    ``earlier_than`` on each candidate that a later one now precedes.
    """
    out = list(kept)
    floors = spread.statement_floors(policy.newest_first_false_rate)
    window = min(policy.newest_first_window, len(out))
    if not floors or window < 1:
        return out
    spare = [c for c in cut[: policy.candidates_per_path] if c.record.dense]
    near = _Neighbours([*out, *spare], floors, policy.newest_first_neighbours)
    if not policy.newest_first_joins:
        spare = []
    for i in range(window):
        # Only the best answer takes a statement the rule cut: one line at most
        # joins, so a long namespace's budget still goes to what answers.
        joining = spare if i == 0 else []
        below = [*out[i + 1 : window], *joining]
        later = _latest_over(out[i], below, policy, near)
        if later is None:
            continue
        if later in joining:
            later.support = "via earlier"
        else:
            out.remove(later)
        out.insert(i, later)
        out[i + 1].earlier_than = later.record.id
    return out


def _latest_over(
    c: Candidate, below: Sequence[Candidate], policy: Policy, near: _Neighbours
) -> Candidate | None:
    """The latest statement in ``below`` that should precede ``c``, if any."""
    # Recall's modules load when a store opens; the language readers with the
    # first recall that reads text (commands that read none never load them).
    from hindsight_lg.memory.language.speech import aside
    from hindsight_lg.memory.recall.lines import chatter

    if not _direct(c) or c.earlier_than or not c.record.dense:
        return None
    if c.paths.get("time", 0.0) > 0:
        return None  # "what did I do last month?" asks for then, not the latest
    least = policy.newest_first_share * c.score
    same = near.same_subject(c)
    found = [
        o
        for o in below
        if o.record.id in same
        and o.record.event_time > c.record.event_time
        and (_direct(o) or not o.support)
        and o.score >= least
        and not aside(o.record.content)
        and not chatter(o.record.content)
    ]
    return max(found, key=lambda o: o.record.event_time, default=None)


class _Neighbours:
    """Which candidates of one recall's pool state the same subject as another.

    Two memories are on the same subject when their cosine clears the
    embedder's floor for unrelated statements *and* each is among the other's
    ``rank`` nearest in the pool, counting only memories by the same person
    or naming them. The floor alone fits a short namespace; in a long
    conversation on a few themes a speaker's statements all sit above it
    ("That's so cute!" beside "the mentoring is going great"), while a change
    of mind stays the nearest to what it changes.
    """

    def __init__(
        self, pool: Sequence[Candidate], floors: dict[str, float], rank: int
    ) -> None:
        from hindsight_lg.memory.language.speech import speaker_of

        dims = {len(c.record.dense) for c in pool if c.record.dense}
        self.pool = [c for c in pool if c.record.dense] if len(dims) == 1 else []
        self.floors, self.rank = floors, rank
        self.speakers = [speaker_of(c.record) for c in self.pool]
        vectors = np.asarray([c.record.dense for c in self.pool], dtype=np.float64)
        if len(vectors):
            vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        self.unit = vectors
        self.index = {c.record.id: i for i, c in enumerate(self.pool)}
        self._of: dict[str, np.ndarray] = {}

    def same_subject(self, c: Candidate) -> set[str]:
        """Ids of the pool's memories on ``c``'s subject, by ``c``'s speaker or by
        a person ``c`` names."""
        i = self.index.get(c.record.id)
        if i is None:
            return set()
        mine = {self.speakers[i]}
        mine |= {p for p in set(self.speakers) if _about(c.record, p)}
        mask = np.isin(np.asarray(self.speakers, dtype=object), list(mine))
        cosines = self.unit @ self.unit[i]
        found = set()
        for j in self._nearest(i, cosines, mask):
            other = self.pool[j]
            if cosines[j] < self._floor(c.record, other.record):
                continue
            back = self.unit @ self.unit[j]
            if i in self._nearest(j, back, self._by_or_about(self.speakers[j])):
                found.add(other.record.id)
        return found

    def _nearest(self, i: int, cosines: np.ndarray, mask: np.ndarray) -> list[int]:
        """The ``rank`` highest ``cosines`` under ``mask``, ``i`` left out."""
        allowed = mask.copy()
        allowed[i] = False
        ranked = np.argsort(-np.where(allowed, cosines, -np.inf))[: self.rank]
        return [int(k) for k in ranked if allowed[k]]

    def _by_or_about(self, person: str) -> np.ndarray:
        """The pool's memories said by ``person`` or naming them."""
        if person not in self._of:
            self._of[person] = np.asarray(
                [
                    p == person or _about(c.record, person)
                    for p, c in zip(self.speakers, self.pool, strict=True)
                ],
                dtype=bool,
            )
        return self._of[person]

    def _floor(self, a: MemoryRecord, b: MemoryRecord) -> float:
        scripts = {script_of(a.content), script_of(b.content)}
        return max(self.floors[s] for s in scripts)


def _about(record: MemoryRecord, person: str) -> bool:
    """Whether ``record`` names ``person`` (Tom's "Maya lives in Leeds", for Maya).

    The person a statement is about may correct it: "I'm in York actually"
    by Maya comes before what Tom said of her.
    """
    if person == "user" or len(person) < 2:
        return False
    named = {e.casefold() for e in record.entities}
    return person in named or person in record.content.casefold()


def _direct(c: Candidate) -> bool:
    return bool(c.support) and not c.support.startswith("via ")
