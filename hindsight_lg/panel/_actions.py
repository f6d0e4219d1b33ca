"""The panel's actions on one memory, shared by the form posts and the JSON API.

Each is one engine call (its own span and audit entries): ``correct``,
``delete`` (a real :meth:`~hindsight_lg.memory.engine.HindsightMemory.forget`,
then a content-free ``forget`` audit entry),
``restore``, ``confirm`` and ``reject`` (a reflection lesson), ``rollback``
(undo the write: what it superseded is current again, it is archived); and
:func:`rollback_thread`, everything one thread wrote.
"""

from __future__ import annotations

from typing import Any

from hindsight_lg.backends import visible_to
from hindsight_lg.memory import HindsightMemory
from hindsight_lg.model import AuditEntry
from hindsight_lg.panel._views import record_json, seen_by

# action -> the word a page shows once it is done
ACTIONS = {
    "correct": "corrected",
    "delete": "deleted",
    "restore": "restored",
    "confirm": "confirmed",
    "reject": "rejected",
    "rollback": "rolled back",
}


def run_action(
    memory: HindsightMemory,
    action: str,
    namespace: str,
    memory_id: str,
    text: str,
    reader: str | None = None,
) -> dict[str, Any]:
    """Run ``action`` on a memory of ``namespace``; returns a JSON-ready outcome.

    With ``reader`` (an agent's panel), a memory private to another agent is
    not found, and the outcome names none.

    Raises:
        KeyError: an unknown action, or no such memory in ``namespace`` (or
            none ``reader`` may see).
        ValueError: what the engine refuses (empty correction, a superseded
            memory, a lesson review on something that is not a lesson, an id
            prefix of several memories).
    """
    if action not in ACTIONS:
        raise KeyError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    if memory_id:  # the id, or the unique prefix the CLI lists, among reader's
        memory_id = memory.lifecycle.resolve_id(namespace, memory_id, reader)
    seen_by(memory, namespace, memory_id, reader)
    if action == "correct":
        fix = memory.correct(namespace, memory_id, text)
        weakened = fix.weakened
        if reader is not None and weakened:
            shown = memory.get_many(namespace, sorted(weakened))
            weakened = {r.id: weakened[r.id] for r in shown if visible_to(r, reader)}
        return {
            "action": action,
            "memory": record_json(fix.memory),
            "superseded": record_json(fix.superseded),
            "weakened": {k: list(v) for k, v in weakened.items()},
        }
    if action == "rollback":
        done = memory.rollback(namespace, memory_id=memory_id, agent_id=reader)
        after = memory.get(namespace, (done.restored or [memory_id])[0])
        return {
            "action": action,
            "archived": done.archived,
            "restored": done.restored,
            "memory": record_json(after) if after is not None else None,
        }
    if action == "delete":
        deleted = memory.forget(namespace, [memory_id])
        # forget purges the memory's audit trail with its content; what stays is
        # that it was deleted, and by whom, without a word of what it said.
        entry = AuditEntry(
            namespace, memory_id, "forget", memory.clock(), {"by": "panel"}
        )
        memory.append_audit(namespace, [entry])
        return {"action": action, "deleted": deleted}
    change = {
        "restore": memory.restore,
        "confirm": memory.confirm_lesson,
        "reject": memory.reject_lesson,
    }[action]
    return {"action": action, "memory": record_json(change(namespace, memory_id))}


def rollback_thread(
    memory: HindsightMemory, namespace: str, thread_id: str, reader: str | None = None
) -> dict[str, Any]:
    """Roll back everything ``thread_id`` wrote (that ``reader`` may see).

    Raises:
        ValueError: an empty thread id.
    """
    if not thread_id.strip():
        raise ValueError("name the thread to roll back")
    done = memory.rollback(namespace, thread_id=thread_id, agent_id=reader)
    return {
        "action": "rollback",
        "thread": thread_id,
        "archived": done.archived,
        "restored": done.restored,
    }
