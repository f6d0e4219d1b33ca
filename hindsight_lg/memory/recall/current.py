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
may have been cut as unrelated, and for the best answer one such statement
rides on it, as a multi-hop answer rides on a graph link (its support is
``via earlier``; ``policy.newest_first_joins``). One line at most: on LoCoMo a
join for every line of the window cost 1.1 points of answer coverage.

Same subject: the earlier one answers the question, and the two are closer to
each other than unrelated statements come with this embedder: their cosine
clears the floor only ``policy.newest_first_false_rate`` of unrelated pairs
of statements reach (:mod:`.calibration`, ``statements:<script>``; Chinese
beside English takes the higher floor). Not moved:

* a later statement that asks, supposes or reports someone else's words
  ("thinking about trying Helix", "Bob said he moved": ``aside``);
* one scoring under ``policy.newest_first_share`` of the earlier one;
* memories said by different speakers ("Where does Maya live?" is not
  answered by Tom's later move), unless the earlier one names the later
  speaker (Tom's "Maya lives in Leeds", then Maya's "I'm in York"), linked to the query only through another
  memory (``via graph``), or without stored vectors to compare.

Cost: the mark, 10 characters a marked line, and a few dot products; no
search, no model call.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.calibration import STATEMENTS, Spread, script_of
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
    floors = _floors(spread, policy.newest_first_false_rate)
    window = min(policy.newest_first_window, len(out))
    if not floors or window < 1:
        return out
    spare = [c for c in cut[: policy.candidates_per_path] if c.record.dense]
    if not policy.newest_first_joins:
        spare = []
    for i in range(window):
        # Only the best answer takes a statement the rule cut: one line at most
        # joins, so a long namespace's budget still goes to what answers.
        joining = spare if i == 0 else []
        later = _latest_over(out[i], [*out[i + 1 : window], *joining], policy, floors)
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
    c: Candidate, below: Sequence[Candidate], policy: Policy, floors: dict[str, float]
) -> Candidate | None:
    """The latest statement in ``below`` that should precede ``c``, if any."""
    # Recall's modules load when a store opens; the language readers with the
    # first recall that reads text (commands that read none never load them).
    from hindsight_lg.memory.language.speech import aside, speaker_of

    if not _direct(c) or c.earlier_than or not c.record.dense:
        return None
    speaker, least = speaker_of(c.record), policy.newest_first_share * c.score
    found = [
        o
        for o in below
        if o.record.event_time > c.record.event_time
        and (_direct(o) or not o.support)
        and o.score >= least
        and (speaker_of(o.record) == speaker or _about(c.record, speaker_of(o.record)))
        and _same_subject(c.record, o.record, floors)
        and not aside(o.record.content)
    ]
    return max(found, key=lambda o: o.record.event_time, default=None)


def _about(record: MemoryRecord, person: str) -> bool:
    """Whether ``record`` names ``person`` (Tom's "Maya lives in Leeds", for Maya).

    The person a statement is about may correct it: "I'm in York actually"
    by Maya comes before what Tom said of her.
    """
    if person == "user" or len(person) < 2:
        return False
    named = {e.casefold() for e in record.entities}
    return person in named or person in record.content.casefold()


def _same_subject(a: MemoryRecord, b: MemoryRecord, floors: dict[str, float]) -> bool:
    if not b.dense or len(a.dense) != len(b.dense):
        return False
    x, y = np.asarray(a.dense), np.asarray(b.dense)
    cosine = float(x @ y) / max(float(np.linalg.norm(x) * np.linalg.norm(y)), 1e-12)
    scripts = {script_of(a.content), script_of(b.content)}
    return cosine >= max(floors[s] for s in scripts)


def _floors(spread: Spread, false_rate: float) -> dict[str, float]:
    """Per script, the cosine only ``false_rate`` of unrelated statements reach."""
    z = NormalDist().inv_cdf(1.0 - false_rate)
    return {
        key.removeprefix(STATEMENTS): mu + z * sd
        for key, (mu, sd) in spread.unrelated.items()
        if key.startswith(STATEMENTS)
    }


def _direct(c: Candidate) -> bool:
    return bool(c.support) and not c.support.startswith("via ")
