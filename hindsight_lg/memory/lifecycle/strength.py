"""Lifecycle maths and record transitions: strength, reinforcement, decay, restore.

Pure functions over records; :class:`~hindsight_lg.memory.engine.HindsightMemory`
does the reading and writing. A memory's *strength* is how available it is:
it falls with time since last use (at the record's half-life), is held up by
importance, and is raised by successful recalls. Below ``policy.cold_threshold``
an active memory goes cold (recalled only when a query bears on it directly,
see :mod:`hindsight_lg.memory.recall.wake`). A cold one is archived
(soft-deleted, restorable) only when it is both weak, below
``policy.archive_threshold``, and of low lasting importance, below
``policy.archive_importance`` (:mod:`.significance`): what a person told about
themselves stays cold, never archived, however long it goes unused.
"""

from __future__ import annotations

import math

from hindsight_lg.memory.lifecycle.significance import PINNED_KEY, lasting_importance
from hindsight_lg.memory.policy import Policy
from hindsight_lg.model import Kind, MemoryRecord, Status

_DAY = 86400.0
_MAX_HALF_LIFE_FACTOR = 10.0


def strength(record: MemoryRecord, now: float) -> float:
    """Availability in [0, 1] from recency, importance and successful recalls."""
    last = max(record.event_time, record.last_accessed_at, record.created_at)
    age_days = max(0.0, now - last) / _DAY
    fading = 0.5 ** (age_days / max(record.half_life_days, 1e-6))
    held = 0.5 + 0.5 * record.importance
    used = 1.0 + 0.1 * math.log1p(record.access_count)
    return round(min(1.0, float(fading * held * used)), 6)


def reinforce(record: MemoryRecord, policy: Policy, now: float) -> MemoryRecord:
    """A successful use: importance grows logarithmically, half-life stretches.

    Experience lessons count confirmations; enough of them verify the lesson,
    which lets it into ordinary recall.
    """
    seed_importance = float(
        record.meta.setdefault("seed_importance", record.importance)
    )
    seed_half_life = float(
        record.meta.setdefault("seed_half_life", record.half_life_days)
    )
    record.access_count += 1
    record.last_accessed_at = now
    record.importance = round(
        min(1.0, seed_importance + 0.1 * math.log1p(record.access_count)), 6
    )
    record.half_life_days = min(
        record.half_life_days * policy.reinforce_half_life_factor,
        seed_half_life * _MAX_HALF_LIFE_FACTOR,
    )
    if record.kind is Kind.EXPERIENCE:
        confirmations = int(record.meta.get("confirmations", 0)) + 1
        record.meta["confirmations"] = confirmations
        if confirmations >= policy.experience_confirmations:
            record.meta["verified"] = True
            record.confidence = max(record.confidence, 0.8)
    if record.status is Status.COLD:
        record.status = Status.ACTIVE
    record.strength = strength(record, now)
    record.version += 1
    return record


def weaken(record: MemoryRecord, factor: float, now: float) -> MemoryRecord:
    """A memory that misled: lower importance and confidence, shorter half-life."""
    if not 0.0 < factor < 1.0:
        raise ValueError("factor must be between 0 and 1")
    record.importance = round(record.importance * factor, 6)
    record.confidence = round(record.confidence * (0.5 + 0.5 * factor), 6)
    record.half_life_days = max(0.5, record.half_life_days * factor)
    record.meta["misled"] = int(record.meta.get("misled", 0)) + 1
    record.strength = strength(record, now)
    record.version += 1
    return record


def decay_status(record: MemoryRecord, policy: Policy, now: float) -> Status | None:
    """The status a record should move to now, or ``None`` to stay.

    Superseded, archived and deleted memories are history: decay leaves them,
    and pinned ones (put explicitly by an application) too. A weak cold
    memory that matters (:func:`kept_from_archive`) stays cold.
    """
    value = strength(record, now)
    record.strength = value
    if record.meta.get(PINNED_KEY):
        return None
    if record.status is Status.ACTIVE and value < policy.cold_threshold:
        return Status.COLD
    if (
        record.status is Status.COLD
        and value < policy.archive_threshold
        and kept_from_archive(record, policy) is None
    ):
        return Status.ARCHIVED
    return None


def kept_from_archive(record: MemoryRecord, policy: Policy) -> str | None:
    """Why a weak memory is not archived (it matters), or ``None`` if it may be.

    Example:
        >>> rule = MemoryRecord(namespace="u", content="Answer in French",
        ...                     kind=Kind.RULE, importance=0.9)
        >>> kept_from_archive(rule, Policy())
        'a rule, lasting importance 0.90'
    """
    value, why = lasting_importance(record, policy)
    if value < policy.archive_importance:
        return None
    return f"{why}, lasting importance {value:.2f}"


def restore(record: MemoryRecord, now: float) -> MemoryRecord:
    """Bring a cold or archived memory back to active, as if just used."""
    if record.status in (Status.SUPERSEDED, Status.DELETED):
        raise ValueError(
            f"memory {record.id} is {record.status.value}; it cannot be "
            "restored (superseded memories stay as history)"
        )
    record.status = Status.ACTIVE
    record.last_accessed_at = now
    record.strength = strength(record, now)
    record.version += 1
    return record
