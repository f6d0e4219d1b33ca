"""A replayed statement is a replay, not a change of mind.

Re-running an app, resuming a LangGraph thread from an old checkpoint or
importing a chat again sends turns the memory has already captured: the old
opinion, then the new one. Captured as new statements, the old opinion would
supersede the new one until the new one came round again, and a replay cut
short would leave the past current.

A new memory is a replay when an existing one, in any status but deleted,
has the same words (case and spacing aside) and shares a source id with it
(the message or turn ids ``capture`` was given). The replay changes nothing:
no new memory, no supersede, no merge; an audit entry records it. A memory
said again *without* the same source ids is a restatement and is judged as
one (the person said it again), and one with an earlier ``event_time`` than
what it contradicts is stored as history by the writer (``_supersede``).

Cost: one dense search of the namespace (three hits) per memory that
carries source ids; the same words embed to the same vector, so the
original is the nearest hit whatever the namespace's size.
"""

from __future__ import annotations

from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.model import MemoryRecord, Status

# Everything that is still stored: history included, deleted never.
_STORED = tuple(s.value for s in Status if s is not Status.DELETED)


def replayed(backend: MemoryBackend, record: MemoryRecord) -> MemoryRecord | None:
    """The memory ``record`` replays (same words, a shared source id), if any."""
    if not record.source_ids:
        return None
    where = Where(statuses=_STORED, reader=record.agent_id or None)
    hits = backend.search_dense(record.namespace, record.dense, where, limit=3)
    words, sources = _words(record.content), set(record.source_ids)
    for hit in hits:
        old = hit.record
        if _words(old.content) == words and sources & set(old.source_ids):
            return old
    return None


def _words(text: str) -> str:
    return " ".join(text.lower().split())
