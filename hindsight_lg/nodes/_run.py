"""What the nodes and the middleware share about one run.

*What was recalled*: a small ledger, which each memory engine keeps, remembers the
ids recalled at the start of a thread's run so reflection at its end can
judge them. *Whose run*: :mod:`hindsight_lg.identity`.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._messages import lookup, text_of
from hindsight_lg.identity import Identity
from hindsight_lg.memory import HindsightMemory, RecallResult

# -- the ledger ---------------------------------------------------------------


@dataclass(slots=True)
class RecallNote:
    """What was recalled at the start of a run: query, ids, and when."""

    query: str
    ids: list[str] = field(default_factory=list)
    at: float = 0.0


class RunLedger:
    """Recall notes per (namespace, thread), read once by reflection.

    The note of a thread's previous run is kept too: when a user message
    corrects the last answer ("that's wrong, ..."), the memories that answer
    was given are the ones to judge, and the correcting turn's own recall
    (of "that's wrong, ...") rarely finds them.
    """

    def __init__(self) -> None:
        self._notes: dict[tuple[str, str], RecallNote] = {}
        self._previous: dict[tuple[str, str], RecallNote] = {}
        self._lock = threading.Lock()

    def note(self, who: Identity, note: RecallNote) -> None:
        """Remember what the run of ``who`` recalled."""
        with self._lock:
            self._notes[(who.namespace, who.thread_id or "")] = note

    def pop(self, who: Identity) -> tuple[RecallNote | None, RecallNote | None]:
        """Take the note of the run of ``who``, with the thread's previous run's.

        Either is ``None`` when nothing was noted.
        """
        key = (who.namespace, who.thread_id or "")
        with self._lock:
            note = self._notes.pop(key, None)
            previous = self._previous.get(key)
            if note is not None:
                self._previous[key] = note
            return note, previous


def ledger_for(memory: HindsightMemory) -> RunLedger:
    """The ledger of one memory engine (shared by its nodes and middleware).

    The engine owns it (:meth:`~hindsight_lg.memory.HindsightMemory.adapter_state`),
    so it lives as long as the engine does.
    """
    return memory.adapter_state(RunLedger)


def submit_turn(memory: Any, who: Identity, messages: list[Any], **kwargs: Any) -> None:
    """Hand a run's turn to the memory's worker, without what no store keeps.

    ``submit`` refuses a turn holding a message no store can keep (bytes, a
    NUL or a lone surrogate, which a client can put in any message). Such a
    message must not end the run: it is left out, with a ``capture_refused``
    log line, and the rest of the turn is captured. Other refusals (a bad
    scope, an id over the limit) still raise: they are the caller's setup.
    """
    kept = [m for m in messages if _storable(m)]
    if len(kept) < len(messages):
        telemetry.get_logger().warning(
            "capture_refused",
            namespace=who.namespace,
            messages=len(messages) - len(kept),
            reason="bytes, NUL or a lone surrogate in a message",
        )
    if kept:
        memory.submit(
            kept,
            namespace=who.namespace,
            agent_id=who.agent_id,
            thread_id=who.thread_id,
            **kwargs,
        )


def _storable(message: Any) -> bool:
    try:
        text = text_of(message)
        text.encode("utf-8")
    except (ValueError, TypeError):  # bytes content, a lone surrogate
        return False
    return "\x00" not in text


def reflection_args(memory: HindsightMemory, who: Identity, llm: Any) -> dict[str, Any]:
    """Keyword arguments of ``reflect`` for the run of ``who`` (takes its ledger note)."""
    note, previous = ledger_for(memory).pop(who)
    return {
        "namespace": who.namespace,
        "agent_id": who.agent_id,
        "thread_id": who.thread_id,
        "recalled_ids": note.ids if note else [],
        "answered_ids": previous.ids if previous else [],
        "query": note.query if note else "",
        "recalled_at": note.at if note else None,
        "llm": llm,
    }


def without_turn(result: RecallResult, turn: Sequence[Any]) -> RecallResult:
    """Drop memories captured from the current turn: the model already has them."""
    ids = {str(lookup(m, "id")) for m in turn if lookup(m, "id")}
    kept = [m for m in result.memories if not ids & set(m.record.source_ids)]
    if len(kept) == len(result.memories):
        return result
    return dataclasses.replace(result, memories=kept)
