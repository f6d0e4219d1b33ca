"""When a cold memory wakes: a direct hit, by a rule calibrated to the embedder.

Cold memories (weak from disuse, or consolidated episodes) are left out of
recall unless a query bears on them directly. "Directly" cannot be one cosine
constant: all-MiniLM-L6-v2 gives a question and the statement that answers it
0.35-0.9 in English, while two unrelated Chinese sentences already score about
0.7 with it, and bge-m3 sits higher again. So the rule is measured on the
embedder in use.

**Calibration.** The dense floor of a script is the embedder's unrelated
similarity (:mod:`.calibration`) at ``policy.cold_wake_false_rate`` (1% by
default: about one unrelated memory in a hundred clears it). A query
containing Chinese, Japanese or Korean characters uses the CJK floor, any
other the Latin one. ``policy.cold_wake_similarity`` set to a number replaces
both measured floors (the design's seed was 0.85, calibrated to bge-m3).

**The rule.** A cold memory wakes when, on the dense or on the lexical path,

1. its score clears the floor: the calibrated dense floor, or
   ``policy.lexical_score_floor`` (BM25's "more than common words" level);
2. and it is a top hit: at least ``policy.cold_wake_share`` (0.9) of the best
   score that path gave any memory, active or cold, in this recall.

Episodes that consolidation moved cold are not weak (decay moves only memories
whose strength fell below ``policy.cold_threshold``; consolidation leaves theirs
as it was): their semantic summary answers for them, so they wake only for a
near-duplicate dense match, ``policy.consolidated_wake_similarity`` (0.85).

The second condition keeps a cold memory that is merely on the topic asleep
while a better match exists; the first keeps a store of only cold memories
from waking its best hit for a question it does not answer. The lexical path
matters for embedders that separate a language poorly (MiniLM on Chinese).

**The boost.** A woken memory is weak by definition, so its score is
multiplied by ``policy.cold_wake_boost`` (2) to rank it beside the active
memories it would otherwise trail; :func:`boosted` caps the product at 1, the
most any memory scores, so every score a recall shows or returns is in 0-1
(a woken memory used to show 1.022). Recall ranks by the product before the
cap, so two woken memories that both reach 1 keep their order.

**Cost.** One extra lexical query over cold memories per recall (served from
the read cache); the dense path already searched active and cold memories.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from hindsight_lg import telemetry
from hindsight_lg.backends.base import Hit
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.calibration import Spread, script_of
from hindsight_lg.model import Status


@dataclass(frozen=True, slots=True)
class WakeRule:
    """Dense floors per script, measured on one embedder (see the module docstring).

    Example:
        >>> rule = WakeRule(model_id="m", floors={"latin": 0.3, "cjk": 0.9})
        >>> rule.floor("Where does Lena live?"), rule.floor("我住在哪里？")
        (0.3, 0.9)
    """

    model_id: str
    floors: dict[str, float]
    unrelated: dict[str, tuple[float, float]] | None = None

    def floor(self, query: str) -> float:
        """The dense floor for ``query``'s script."""
        return self.floors[script_of(query)]


def rule_for(spread: Spread, policy: Policy) -> WakeRule:
    """The rule under ``policy`` for the embedder ``spread`` was measured on.

    A number in ``policy.cold_wake_similarity`` is the floor of every script.
    """
    if policy.cold_wake_similarity is not None:
        fixed = float(policy.cold_wake_similarity)
        return WakeRule(spread.model_id, {"latin": fixed, "cjk": fixed})
    floors = spread.floors(policy.cold_wake_false_rate)
    return WakeRule(spread.model_id, floors, spread.asked)


def wakes(score: float, best: float, floor: float, share: float) -> tuple[bool, str]:
    """Whether a cold memory's path score wakes it, and the reason in words.

    Example:
        >>> wakes(0.62, 0.64, 0.28, 0.9)
        (True, '0.620 >= floor 0.280 and >= 0.9 x best 0.640')
        >>> wakes(0.21, 0.64, 0.28, 0.9)[1]
        '0.210 below floor 0.280'
    """
    if score < floor:
        return False, f"{score:.3f} below floor {floor:.3f}"
    if score < share * best:
        return False, f"{score:.3f} below {share:g} x best {best:.3f}"
    return True, f"{score:.3f} >= floor {floor:.3f} and >= {share:g} x best {best:.3f}"


def boosted(score: float, boost: float) -> tuple[float, float]:
    """A woken memory's shown score (capped at 1) and its rank (the product).

    Example:
        >>> boosted(0.3, 2.0), boosted(0.511, 2.0)
        ((0.6, 0.6), (1.0, 1.022))
    """
    rank = score * boost
    return min(1.0, rank), rank


def wake_cold(
    found: dict[str, list[Hit]],
    dense_floor: float,
    policy: Policy,
    why_of: dict[str, str],
) -> set[str]:
    """The cold memories ``found`` that wake (see :mod:`.wake`).

    ``why_of`` gets, for every cold memory a path found, why it woken or
    why it did not. ``dense_floor`` is the wake rule's floor for the query.
    """
    floors = {
        "dense": dense_floor,
        "lexical": policy.lexical_score_floor,
    }
    share = policy.cold_wake_share
    woken: set[str] = set()
    why: dict[str, list[str]] = defaultdict(list)
    summarised = {
        "dense": max(floors["dense"], policy.consolidated_wake_similarity),
        "lexical": float("inf"),
    }
    for path, hits in found.items():
        best = max((h.score for h in hits), default=0.0)
        for h in hits:
            if h.record.status is not Status.COLD:
                continue
            # Cold at full strength: consolidation summarised it (decay
            # only moves weak memories); its summary answers for it.
            weak = h.record.strength < policy.cold_threshold
            floor = floors[path] if weak else summarised[path]
            ok, reason = wakes(h.score, best, floor, share)
            why[h.record.id].append(f"{path} {reason}")
            if ok:
                woken.add(h.record.id)
    for memory_id, parts in why.items():
        said = "woken" if memory_id in woken else "not woken"
        why_of[memory_id] = f"{said}: " + "; ".join(parts)
    if woken:
        telemetry.current_span().set_attribute("hindsight.woken", sorted(woken))
    return woken
