"""A person's corrections: correct a memory, confirm or reject a reflection lesson.

A correction is the strongest reinforcement signal memory gets: somebody read
what the agent remembers and said what is true instead. :func:`correct`

1. writes the person's text as a new, user-confirmed memory of the same kind,
   tier, scope, agent and speakers, with importance raised to
   ``max(old, seed) + importance_boost`` (at most 1.0). What capture reads
   from a text is read again from the new one, never copied from the old:
   entities (and their ``mentions`` edges), emotion, goal, the time it names,
   the slot it sets, summary and vector. The lexical index is built from the
   content and the entities, so "I live in Munich" is found by "Munich",
   not by the "Berlin" it replaced;
2. supersedes the old memory (status ``superseded``, ``superseded_by`` the new
   id, importance ``policy.superseded_importance``) and links the two with a
   ``supersedes`` edge: the old text stays as history;
3. weakens the memories on the same topic a little, a bounded cascade: at most
   ``topic_limit`` active or cold memories (that the corrected memory's agent
   may see) whose cosine similarity to the corrected one is at least
   ``topic_similarity`` each keep
   ``1 - topic_penalty * similarity`` of their importance (so they lose at most
   ``topic_penalty``, 10% by default) and never drop below ``topic_floor``.

:func:`confirm_lesson` verifies an ``experience`` lesson (it joins ordinary
recall); :func:`reject_lesson` archives it as wrong.

Every change to an existing memory goes through
:meth:`Lifecycle.update <hindsight_lg.memory.lifecycle.Lifecycle.update>` with
``expected_version``: when another writer (an agent reinforcing the memory in
another process) got there first, the memory is read again and the change
re-applied to the fresh version, so the other write is never lost. Each
operation is one span and leaves audit entries on every memory it touched.
Each takes the memory's id or the unique prefix a listing printed (:mod:`.ids`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hindsight_lg import telemetry
from hindsight_lg._text import summarize
from hindsight_lg.backends.base import Where, check_text
from hindsight_lg.errors import ConflictError
from hindsight_lg.memory.capture.vectors import embed_records
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    SourceKind,
    Status,
    entity_id,
)

if TYPE_CHECKING:
    from hindsight_lg.memory.lifecycle.ops import Lifecycle

CORRECT = "hindsight.correct"
CONFIRM_LESSON = "hindsight.confirm_lesson"
REJECT_LESSON = "hindsight.reject_lesson"


@dataclass(frozen=True, slots=True)
class CorrectionFactors:
    """The bounded factors of a correction (see the module docstring).

    Args:
        importance_boost: added to the corrected memory's importance (0..1).
        topic_similarity: cosine similarity from which a memory is on the topic.
        topic_penalty: the most importance a topic memory loses, as a fraction.
        topic_floor: the cascade never lowers importance below this.
        topic_limit: how many topic memories the cascade touches at most.
        retries: compare-and-swap attempts per memory before giving up.
    """

    importance_boost: float = 0.2
    topic_similarity: float = 0.6
    topic_penalty: float = 0.1
    topic_floor: float = 0.05
    topic_limit: int = 10
    retries: int = 5

    def __post_init__(self) -> None:
        for name in ("importance_boost", "topic_similarity", "topic_penalty"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1")
        if self.topic_limit < 0 or self.retries < 1:
            raise ValueError("topic_limit must be >= 0 and retries >= 1")


@dataclass(slots=True)
class Correction:
    """What a correction did.

    Attributes:
        memory: the new memory holding the person's text.
        superseded: the old memory, now superseded by ``memory``.
        weakened: topic memories whose importance fell, by id: (before, after).
    """

    memory: MemoryRecord
    superseded: MemoryRecord
    weakened: dict[str, tuple[float, float]] = field(default_factory=dict)


def cas_update(
    life: Lifecycle,
    namespace: str,
    memory_id: str,
    change: Callable[[MemoryRecord], dict[str, Any] | None],
    *,
    retries: int = 5,
) -> MemoryRecord | None:
    """Apply ``change`` to the stored memory with compare-and-swap, retrying.

    ``change`` gets the freshly read record and returns the fields to set
    (``None``: nothing to do). On a version conflict the memory is read again
    and ``change`` asked again, so a concurrent write is kept, not overwritten.

    Returns:
        The updated record, or ``None`` when ``change`` had nothing to do.

    Raises:
        KeyError: no such memory.
        ConflictError: still conflicting after ``retries`` attempts.
    """
    for attempt in range(retries):
        record = life.read(namespace, memory_id)
        changes = change(record)
        if changes is None:
            return None
        try:
            return life.update(
                namespace, memory_id, expected_version=record.version, **changes
            )
        except ConflictError:
            if attempt == retries - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _correction_record(
    life: Lifecycle, old: MemoryRecord, text: str, boost: float
) -> MemoryRecord:
    now = life.clock()
    seed = life.policy.importance(old.kind)
    derived = _read_again(text, old.kind, now)
    record = MemoryRecord(
        namespace=old.namespace,
        content=text,
        kind=old.kind,
        agent_id=old.agent_id,
        scope=old.scope,
        tier=old.tier,
        summary=summarize(text),
        event_time=now,
        created_at=now,
        last_accessed_at=now,
        importance=round(min(1.0, max(old.importance, seed) + boost), 6),
        confidence=1.0,
        half_life_days=max(old.half_life_days, life.policy.half_life(old.kind)),
        participants=list(old.participants),
        entities=derived.pop("entities"),
        source_kind=SourceKind.USER_CONFIRMED,
        thread_id=old.thread_id,
        source_ids=list(old.source_ids),
        meta={"origin": "correction", "corrects": old.id, **derived.pop("meta")},
        **derived,
    )
    record.dense = embed_records(life.embedder, [text])[0]
    return record


def read_again(record: MemoryRecord, now: float, given: Collection[str] = ()) -> None:
    """Set on ``record`` what capture reads from its text, after its words changed.

    An update of a memory's content (``update(content=...)``, the memory
    tools' update) would otherwise keep the entities and slot of the words it
    replaced: "Berlin" found, "Munich" missed. Fields in ``given`` were set
    by the caller and stay as given.
    """
    from hindsight_lg.memory.capture.conflicts import SLOT_KEY  # lazily: as below

    derived = _read_again(record.content, record.kind, now)
    kept = {k: v for k, v in record.meta.items() if k != SLOT_KEY}
    record.meta = {**kept, **derived.pop("meta")}
    for name, value in derived.items():
        if name not in given:
            setattr(record, name, value)


def _read_again(text: str, kind: Kind, now: float) -> dict[str, Any]:
    """The fields capture reads from a text, read from the corrected text.

    Returns ``entities``, ``emotion``, ``goal``, ``mentioned_time`` and the
    ``meta`` holding the slot the text sets, as capture's writer sets them.
    The old memory's were read from the words the person just replaced.
    """
    # Imported here: the language tables take a noticeable part of a second
    # to compile, and the panel and the CLI list memories without them.
    from hindsight_lg.memory.capture.conflicts import SLOT_KEY
    from hindsight_lg.memory.language.encode import extract
    from hindsight_lg.memory.language.slots import read

    drafts = extract(text, speaker=None, ref_time=now).events
    times = [d.mentioned_time for d in drafts if d.mentioned_time is not None]
    reading = read(text)
    return {
        "entities": list(dict.fromkeys(e for d in drafts for e in d.entities)),
        "emotion": next((d.emotion for d in drafts if d.emotion), ""),
        "goal": text if kind is Kind.TASK else "",
        "mentioned_time": times[0] if times else None,
        "meta": {SLOT_KEY: reading.slot} if reading is not None else {},
    }


def _supersede(old_id: str, new_id: str, importance: float) -> Any:
    def change(record: MemoryRecord) -> dict[str, Any]:
        if record.status is Status.SUPERSEDED and record.superseded_by != new_id:
            raise ValueError(
                f"memory {old_id} was superseded by {record.superseded_by} "
                "meanwhile: correct that one instead"
            )
        return {
            "status": Status.SUPERSEDED,
            "superseded_by": new_id,
            "importance": min(record.importance, importance),
        }

    return change


def _topic(
    life: Lifecycle, old: MemoryRecord, new_id: str, f: CorrectionFactors
) -> list[tuple[str, float]]:
    """(id, similarity) of the memories on the corrected memory's topic."""
    if f.topic_limit == 0 or not old.dense:
        return []
    hits = life.backend.search_dense(
        old.namespace,
        old.dense,
        # Only what the corrected memory's agent can see: a correction of one
        # agent's private knowledge leaves another agent's alone.
        Where(statuses=("active", "cold"), reader=old.agent_id or None),
        limit=f.topic_limit + 2,
    )
    near = [
        (h.record.id, min(1.0, h.score))
        for h in hits
        if h.record.id not in (old.id, new_id) and h.score >= f.topic_similarity
    ]
    return near[: f.topic_limit]


def _lower(similarity: float, f: CorrectionFactors) -> Any:
    def change(record: MemoryRecord) -> dict[str, Any] | None:
        if record.importance <= f.topic_floor:
            return None
        kept = record.importance * (1.0 - f.topic_penalty * similarity)
        return {"importance": round(max(f.topic_floor, kept), 6)}

    return change


def correct(
    life: Lifecycle,
    namespace: str,
    memory_id: str,
    text: str,
    factors: CorrectionFactors | None = None,
) -> Correction:
    """Replace a memory by a person's correction; see the module docstring.

    ``memory_id`` may be the unique prefix a listing printed (:mod:`.ids`).

    Raises:
        KeyError: no such memory.
        ValueError: empty text, a memory that is already superseded or
            deleted, or a prefix of several memories' ids.
        ConflictError: a compare-and-swap kept losing.
    """
    f = factors or CorrectionFactors()
    check_text(text or "", "the correction")
    text = (text or "").strip()
    if not text:
        raise ValueError("a correction needs the corrected text; it is empty")
    memory_id = life.resolve_id(namespace, memory_id)
    with telemetry.memory_span(
        CORRECT, telemetry.UPDATE_MEMORY, namespace=namespace, memory_id=memory_id
    ) as span:
        old = life.read(namespace, memory_id)
        if old.status in (Status.SUPERSEDED, Status.DELETED):
            newer = f" (correct {old.superseded_by})" if old.superseded_by else ""
            raise ValueError(f"memory {memory_id} is {old.status.value}{newer}")
        new = _correction_record(life, old, text, f.importance_boost)
        with life.write_lock:
            _store_correction(life, old, new)
            try:
                superseded = cas_update(
                    life,
                    namespace,
                    old.id,
                    _supersede(old.id, new.id, life.policy.superseded_importance),
                    retries=f.retries,
                )
            except Exception:
                # The old memory stays as it was: take the correction back.
                life.backend.delete_edges(namespace, [new.id])
                life.backend.delete(namespace, [new.id])
                raise
            assert superseded is not None
            result = Correction(new, superseded)
            for other_id, similarity in _topic(life, old, new.id, f):
                _cascade(life, namespace, other_id, similarity, f, result)
            _audit_correction(life, result, old.content)
        span.set_attribute("hindsight.new_memory_id", new.id)
        span.set_attribute("hindsight.weakened_ids", sorted(result.weakened))
        return result


def _store_correction(life: Lifecycle, old: MemoryRecord, new: MemoryRecord) -> None:
    now = life.clock()
    life.backend.upsert(new.namespace, [new])
    edges = [Edge(new.namespace, new.id, old.id, EdgeType.SUPERSEDES, 1.0, now)]
    edges += [
        Edge(new.namespace, new.id, entity_id(e), EdgeType.MENTIONS, 1.0, now)
        for e in new.entities
    ]
    life.backend.add_edges(new.namespace, edges)


def _cascade(
    life: Lifecycle,
    namespace: str,
    memory_id: str,
    similarity: float,
    f: CorrectionFactors,
    result: Correction,
) -> None:
    before = life.read(namespace, memory_id).importance
    try:
        after = cas_update(
            life, namespace, memory_id, _lower(similarity, f), retries=f.retries
        )
    except KeyError:  # deleted meanwhile: nothing left to weaken
        return
    if after is not None:
        result.weakened[memory_id] = (before, after.importance)


def _audit_correction(life: Lifecycle, result: Correction, old_text: str) -> None:
    now = life.clock()
    ns = result.memory.namespace
    entries = [
        AuditEntry(
            ns,
            result.memory.id,
            "correct",
            now,
            {
                "content": result.memory.content,
                "supersedes": result.superseded.id,
                "weakened": sorted(result.weakened),
            },
        ),
        AuditEntry(
            ns,
            result.superseded.id,
            "corrected",
            now,
            {"content": old_text, "superseded_by": result.memory.id},
        ),
    ]
    entries += [
        AuditEntry(
            ns,
            i,
            "correction-cascade",
            now,
            {"correction": result.memory.id, "importance": list(change)},
        )
        for i, change in result.weakened.items()
    ]
    life.backend.append_audit(ns, entries)
    life.backend.flush()


def _lesson_change(confirm: bool) -> Callable[[MemoryRecord], dict[str, Any]]:
    def change(record: MemoryRecord) -> dict[str, Any]:
        if record.kind is not Kind.EXPERIENCE:
            raise ValueError(
                f"memory {record.id} is a {record.kind.value}, not an experience "
                "lesson: only lessons are confirmed or rejected"
            )
        meta = dict(record.meta)
        meta["verified"] = confirm
        meta["reviewed_by"] = "user"
        if confirm:
            meta.pop("rejected", None)
            return {
                "meta": meta,
                "confidence": max(record.confidence, 0.9),
                "status": Status.ACTIVE,
            }
        meta["rejected"] = True
        return {
            "meta": meta,
            "confidence": min(record.confidence, 0.1),
            "status": Status.ARCHIVED,
        }

    return change


def review_lesson(
    life: Lifecycle, namespace: str, memory_id: str, *, confirm: bool
) -> MemoryRecord:
    """Confirm (verify, active) or reject (archive) an experience lesson.

    A confirmed lesson joins ordinary recall; a rejected one is archived (it
    stays restorable and in the audit trail) and never recalled.
    ``memory_id`` may be the unique prefix a listing printed (:mod:`.ids`).

    Raises:
        KeyError: no such memory.
        ValueError: the memory is not an experience lesson, or a prefix of
            several memories' ids.
        ConflictError: a compare-and-swap kept losing.
    """
    memory_id = life.resolve_id(namespace, memory_id)
    name, op = (CONFIRM_LESSON, "confirm") if confirm else (REJECT_LESSON, "reject")
    with telemetry.memory_span(
        name, telemetry.UPDATE_MEMORY, namespace=namespace, memory_id=memory_id
    ):
        updated = cas_update(life, namespace, memory_id, _lesson_change(confirm))
        assert updated is not None
        life.backend.append_audit(
            namespace,
            [AuditEntry(namespace, memory_id, op, life.clock(), {"by": "user"})],
        )
        life.backend.flush()
        return updated
