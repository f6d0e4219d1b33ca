"""Which current memories a new one replaces, corrects, restates or stands beside.

A change of mind is found by *slot*, not by words or kind: "These days I
cycle to the office instead" and "I take the 7:40 train" share few words and
the classifier may call one an event and the other a fact, yet both set the
user's commute. Candidates are therefore the new memory's nearest neighbours
(dense) plus the memories that use the words of its slot (lexical: "live",
"moved", "住", "搬" for where one lives), and a :data:`Judge` decides for each.

The default judge reads both statements as slots (:mod:`..language.judge`);
with an LLM, :mod:`.llm_judge` asks the model and falls back to it. A
statement outside every slot the judge knows falls back to the older rule:
the same kind, a shared entity, and a flipped polarity or an update cue.

Current means active *or cold*: a memory that went cold from disuse is still
what the person last said. A change of mind supersedes it (history kept)
rather than leaving it cold, where a direct question could still wake it, and
a restatement reinforces it rather than making a second copy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field

from hindsight_lg._text import has_negation, terms
from hindsight_lg.backends.base import Hit, MemoryBackend, Where
from hindsight_lg.memory._locks import FORGET_LEASE
from hindsight_lg.memory.capture.merges import record_merge
from hindsight_lg.memory.capture.speakers import as_said_by, may_change
from hindsight_lg.memory.language.judge import Decision, decide
from hindsight_lg.memory.language.lexicon import anchor_words
from hindsight_lg.memory.language.slots import Reading, read, readings
from hindsight_lg.memory.language.speech import reported
from hindsight_lg.model import Kind, MemoryRecord, Status

# (new memory, current candidates) -> one decision per candidate
Judge = Callable[[MemoryRecord, Sequence[MemoryRecord]], list[Decision]]

_LEGACY_KINDS = {Kind.PREFERENCE, Kind.FACT, Kind.RULE, Kind.TASK}
SLOT_KEY = "slot"  # meta key: the slot a memory sets ("user/commute")
# Archived, superseded and deleted memories are history, never candidates.
CURRENT = (Status.ACTIVE.value, Status.COLD.value)


class ForgetLeases:
    """The forget leases one capture batch takes, held until its writes are sent.

    A supersede writes the memories it retires back whole: on a server,
    another process that forgot one between this capture's search and its
    write would see it return. Forgetting holds the namespace's
    :data:`FORGET_LEASE`; a supersede takes it before it reads the memories
    it retires again, and keeps it until they are written. A lease is not
    re-entrant, so each namespace is held once per batch.
    """

    def __init__(self, backend: MemoryBackend, stack: ExitStack) -> None:
        self._backend = backend
        self._stack = stack  # closed once the batch is sent
        self._held: set[str] = set()

    def hold(self, namespace: str) -> None:
        """Hold ``namespace``'s forget lease until the batch ends."""
        if namespace not in self._held:
            lease = self._backend.exclusive(namespace, FORGET_LEASE)
            self._stack.enter_context(lease)
            self._held.add(namespace)


# When two statements share several slots, the decision that says most wins.
_STRONGEST = (Decision.CORRECT, Decision.REPLACE, Decision.REINFORCE, Decision.ADD)


def heuristic_judge(new: MemoryRecord, olds: Sequence[MemoryRecord]) -> list[Decision]:
    """Slot decisions, with the legacy rule where either statement has no slot.

    Each statement may set several slots (one per clause, :func:`readings`);
    every pair is judged and the strongest decision is the answer. A first
    person is its speaker ("I live in York" by Maya is about Maya), and a
    statement reporting someone else's words changes nothing.
    """
    if reported(new.content):
        return [Decision.IGNORE] * len(olds)
    mine = [as_said_by(r, new) for r in readings(new.content)]
    out = []
    for old in olds:
        theirs = [as_said_by(r, old) for r in readings(old.content)]
        if mine and theirs:
            out.append(_strongest([decide(a, b) for a in mine for b in theirs]))
        elif legacy_conflict(new, old):
            out.append(Decision.REPLACE)
        else:
            out.append(Decision.IGNORE)
    return out


def _about(record: MemoryRecord) -> Reading | None:
    """What ``record`` is about, its first person resolved to its speaker."""
    reading = read(record.content)
    return None if reading is None else as_said_by(reading, record)


def _strongest(decisions: Sequence[Decision]) -> Decision:
    return next((d for d in _STRONGEST if d in decisions), Decision.IGNORE)


def legacy_conflict(new: MemoryRecord, old: MemoryRecord) -> bool:
    """The rule before slots: same kind, shared entity, polarity flip or update cue."""
    if new.kind != old.kind or new.kind not in _LEGACY_KINDS:
        return False
    shared = {e.lower() for e in new.entities} & {e.lower() for e in old.entities}
    if not shared:
        return False
    flipped = has_negation(new.content) != has_negation(old.content)
    return flipped or bool(new.meta.get("is_update"))


def slot_terms(content: str) -> list[str]:
    """Lexical terms that find earlier statements of the same slot (may be empty)."""
    reading = read(content)
    if reading is None:
        return []
    words = anchor_words(reading.attribute, reading.subject)
    return list(dict.fromkeys(terms(words)))


def candidates(backend: MemoryBackend, record: MemoryRecord, limit: int) -> list[Hit]:
    """Current memories (active, cold) the new one may change: nearest, then slot words.

    Dense neighbours alone miss a change of mind in other words ("moved to
    Shenzhen" after "I live in Hangzhou"), so a lexical search with the slot's
    words adds the memories that state the same slot (score 0: not similar).
    """
    where = Where(statuses=CURRENT, reader=record.agent_id or None)
    hits = backend.search_dense(record.namespace, record.dense, where, limit=limit)
    anchors = slot_terms(record.content)
    if anchors:
        seen = {h.record.id for h in hits}
        lexical = backend.search_lexical(record.namespace, anchors, where, limit=limit)
        hits += [Hit(h.record, 0.0) for h in lexical if h.record.id not in seen]
    return hits


def retire(old: MemoryRecord, by: str, importance: float) -> None:
    """Mark ``old`` superseded by memory ``by``; it stays as history."""
    old.status = Status.SUPERSEDED
    old.superseded_by = by
    old.importance = importance
    old.version += 1


def mergeable(record: MemoryRecord, cold_threshold: float) -> bool:
    """Whether a restatement may merge into ``record`` (and wake it if cold).

    Not into a cold memory at full strength: consolidation moved it cold and
    its summary answers for it (decay only moves weak memories).
    """
    return record.status is not Status.COLD or record.strength < cold_threshold


def absorb(old: MemoryRecord, new: MemoryRecord, now: float) -> bool:
    """Merge restatement ``new`` into ``old``; returns whether ``old`` was cold.

    ``old`` gains ``new``'s sources and names and notes what it claimed
    (:mod:`.merges`: ids and names, never ``new``'s text, so forgetting
    ``new``'s thread can take them back). The caller bumps ``old.version``
    and writes it.
    """
    woken = old.status is Status.COLD
    if woken:
        # Said again: as current as a new memory would be.
        old.status = Status.ACTIVE
        old.strength = new.strength
    old.event_time = max(old.event_time, new.event_time)
    old.last_accessed_at = now
    old.importance = min(1.0, old.importance + 0.1 * (1 - old.importance))
    record_merge(old, new, now)
    return woken


@dataclass(slots=True)
class Resolution:
    """What the judge decided against the candidates."""

    superseded: list[MemoryRecord] = field(default_factory=list)
    decision: Decision = Decision.IGNORE
    reinforced: MemoryRecord | None = None
    # Never merged into: judged ADD, or said by another speaker.
    kept_apart: set[str] = field(default_factory=set)


def resolve(new: MemoryRecord, hits: Sequence[Hit], judge: Judge) -> Resolution:
    """Judge ``new`` against the candidate hits (best first, ids unique).

    Only candidates ``new``'s speaker may change are judged
    (:func:`.speakers.may_change`), whichever judge is in use.
    """
    olds = [h.record for h in hits if h.record.id != new.id]
    others = {o.id for o in olds if not may_change(new, o, _about(o))}
    olds = [o for o in olds if o.id not in others]
    # Another speaker's memory is never merged into, however alike the words.
    out = Resolution(kept_apart=others)
    if not olds:
        return out
    decisions = judge(new, olds)
    for old, decision in zip(olds, decisions, strict=False):
        if decision.supersedes:
            out.superseded.append(old)
            # A correction anywhere makes the whole change a correction.
            if out.decision is not Decision.CORRECT:
                out.decision = decision
        elif decision is Decision.REINFORCE and out.reinforced is None:
            out.reinforced = old
        elif decision is Decision.ADD:
            out.kept_apart.add(old.id)
    if not out.superseded and out.reinforced is not None:
        out.decision = Decision.REINFORCE
    return out
