"""What a run recalled, and the reflection that judges it at the run's end.

*What was recalled*: a small ledger, which each memory engine keeps, remembers
the ids recalled at the start of a thread's run so reflection at its end can
judge them. *Reflection* (:class:`Reflector`): the node and the middleware
reflect the same way, queued on the capture worker or inline. Whose run it
is, what a recall asks and what a turn hands to capture are the adapter
core's (:mod:`hindsight_lg.nodes._adapter`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Literal

from hindsight_lg.identity import Identity
from hindsight_lg.memory import (
    HindsightMemory,
    Reflection,
    areflect,
    reflect,
    reflect_later,
)
from hindsight_lg.nodes._turns import reflection_turn

ReflectMode = Literal["background", "sync"]

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


# -- reflection -----------------------------------------------------------------


class Reflector:
    """Reflection on a finished run: queued on the capture worker, or inline.

    Args:
        memory: the engine to judge and update.
        llm: optional chat model for the judgement (heuristics without one).
        mode: ``"background"`` queues the reflection (the run does not wait;
            ``memory.flush()`` does); ``"sync"`` runs it before returning.

    Raises:
        ValueError: unknown ``mode``.
    """

    def __init__(self, memory: HindsightMemory, llm: Any, mode: ReflectMode) -> None:
        if mode not in ("background", "sync"):
            raise ValueError(f"mode must be 'background' or 'sync', not {mode!r}")
        self.memory, self.llm, self.mode = memory, llm, mode
        self.last: Reflection | None = None

    def _done(self, result: Reflection) -> None:
        self.last = result

    def _start(self, who: Identity, messages: list[Any]) -> tuple[list[Any], Any]:
        turn = reflection_turn(messages)
        return turn, reflection_args(self.memory, who, self.llm)

    def run(self, who: Identity, messages: list[Any]) -> None:
        """Reflect on the run of ``who`` whose thread holds ``messages``."""
        turn, kwargs = self._start(who, messages)
        if self.mode == "background":
            reflect_later(self.memory, turn, on_done=self._done, **kwargs)
        else:
            self._done(reflect(self.memory, turn, **kwargs))

    async def arun(self, who: Identity, messages: list[Any]) -> None:
        """Async twin of :meth:`run` (an inline reflection is awaited)."""
        turn, kwargs = self._start(who, messages)
        if self.mode == "background":
            reflect_later(self.memory, turn, on_done=self._done, **kwargs)
        else:
            self._done(await areflect(self.memory, turn, **kwargs))
