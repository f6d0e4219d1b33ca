"""The panel's actions on one memory, shared by the form posts and the JSON API.

Each is one engine call (its own span and audit entries): ``correct``,
``delete`` (a real :meth:`~hindsight_lg.memory.engine.HindsightMemory.forget`,
then a content-free ``forget`` audit entry),
``restore``, ``confirm`` and ``reject`` (a reflection lesson).
"""

from __future__ import annotations

from typing import Any

from hindsight_lg.memory import HindsightMemory
from hindsight_lg.model import AuditEntry
from hindsight_lg.panel._views import record_json

# action -> the word a page shows once it is done
ACTIONS = {
    "correct": "corrected",
    "delete": "deleted",
    "restore": "restored",
    "confirm": "confirmed",
    "reject": "rejected",
}


def run_action(
    memory: HindsightMemory, action: str, namespace: str, memory_id: str, text: str
) -> dict[str, Any]:
    """Run ``action`` on a memory of ``namespace``; returns a JSON-ready outcome.

    Raises:
        KeyError: an unknown action, or no such memory in ``namespace``.
        ValueError: what the engine refuses (empty correction, a superseded
            memory, a lesson review on something that is not a lesson).
    """
    if action not in ACTIONS:
        raise KeyError(f"unknown action {action!r}; one of {', '.join(ACTIONS)}")
    if not memory_id or memory.get(namespace, memory_id) is None:
        raise KeyError(f"no memory {memory_id!r} in namespace {namespace!r}")
    if action == "correct":
        fix = memory.correct(namespace, memory_id, text)
        return {
            "action": action,
            "memory": record_json(fix.memory),
            "superseded": record_json(fix.superseded),
            "weakened": {k: list(v) for k, v in fix.weakened.items()},
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
