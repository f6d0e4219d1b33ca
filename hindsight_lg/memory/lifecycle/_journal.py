"""Consolidation that a kill cannot leave half done: the summary is the journal.

Consolidating a cluster writes three things: the semantic summary, its
``derived_from`` (and ``mentions``) edges, and the move of its episodes to
cold. A kill between them used to leave episodes active beside their summary
(summarised again by the next run) or summaries without their edges.

Order, so every crash point is recoverable:

1. the summary, marked ``meta["consolidating"] = True`` and naming its
   episodes in ``meta["derived_from"]``, with its edges; flushed;
2. the episodes, cold (version + 1, audited ``consolidated``); flushed;
3. the summary again, without the mark; flushed.

Every consolidation first finishes the summaries still marked (steps 2 and
3, plus any missing ``derived_from`` edge), before it reads the active
episodes: an interrupted run is rolled forward, never repeated, and finishing
is idempotent. A kill before step 1's flush leaves nothing (the episodes are
still active and are clustered again). Cost: three flushes per run.
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord, Status

PENDING = "consolidating"


def pending(backend: MemoryBackend, namespace: str) -> list[MemoryRecord]:
    """Summaries of ``namespace`` whose consolidation was not finished."""
    where = Where(statuses=("active", "cold", "archived"), tiers=("semantic",))
    rows = backend.query(namespace, where, limit=10**7)
    return [r for r in rows if r.meta.get(PENDING)]


def finish(
    backend: MemoryBackend,
    namespace: str,
    summaries: Sequence[MemoryRecord],
    now: float,
) -> int:
    """Steps 2 and 3 for ``summaries`` (and missing edges); returns episodes moved."""
    if not summaries:
        return 0
    members = {m for s in summaries for m in _members(s)}
    episodes = {r.id: r for r in backend.get(namespace, sorted(members), vectors=True)}
    moved, audit = [], []
    for summary in summaries:
        for mid in _members(summary):
            episode = episodes.get(mid)
            if episode is None or episode.status is not Status.ACTIVE:
                continue
            episode.status, episode.version = Status.COLD, episode.version + 1
            moved.append(episode)
            audit.append(
                AuditEntry(namespace, mid, "consolidated", now, {"into": summary.id})
            )
    _restore_edges(backend, namespace, summaries, set(episodes), now)
    if moved:
        backend.upsert(namespace, moved)
        backend.append_audit(namespace, audit)
    backend.flush()
    done = backend.get(namespace, [s.id for s in summaries], vectors=True)
    for summary in done:
        summary.meta.pop(PENDING, None)
    backend.upsert(namespace, done)
    backend.flush()
    return len(moved)


def _members(summary: MemoryRecord) -> list[str]:
    ids = summary.meta.get("derived_from")
    return [str(i) for i in ids] if isinstance(ids, list) else []


def _restore_edges(
    backend: MemoryBackend,
    namespace: str,
    summaries: Sequence[MemoryRecord],
    existing: set[str],
    now: float,
) -> None:
    ids = [s.id for s in summaries]
    have = {
        (e.src, e.dst)
        for e in backend.edges(namespace, ids, types=(EdgeType.DERIVED_FROM,))
    }
    missing = [
        Edge(namespace, s.id, m, EdgeType.DERIVED_FROM, 0.8, now)
        for s in summaries
        for m in _members(s)
        if m in existing and (s.id, m) not in have
    ]
    if missing:
        backend.add_edges(namespace, missing)
