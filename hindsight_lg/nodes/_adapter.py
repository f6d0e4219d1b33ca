"""The adapter core: what the nodes, the middleware and the memory tools do alike.

Three things decide what memory a run sees and leaves behind. Each is built
here, once, and every LangGraph-facing adapter calls it, so none can drift:

* *Whose run* (:class:`Who`): the rule of :mod:`hindsight_lg.identity` applied
  to the run's config and context (namespace, agent, thread), and what a run
  that names nobody does (raise when strict, else warn once per thread).
* *What a recall asks and keeps* (:func:`recall_args`, :func:`recalled`,
  :func:`arecalled`): the latest user message is the query, the messages just
  before it the context; the ephemeral memory block of an earlier recall is
  memory, not conversation, and is never read as context. The answer drops
  what the current turn itself became (the model has it already) and is
  noted in the run's ledger for reflection.
* *What a turn hands to capture* (:func:`hand_off`, :func:`claim`): the
  current turn without the ephemeral block (and without the assistant's
  echoes of tool output unless asked for), queued on the worker; a message a
  tool turned into a memory itself is claimed by the very key ``submit``
  claims it by, so no capture path keeps a second copy.

The adapters differ only in where they find the config and the messages, and
in what they make of the answer: a node a state update, the middleware a
private state key, a tool a fenced answer.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._messages import (
    capturable,
    lookup,
    text_of,
)
from hindsight_lg.identity import (
    Identity,
    IdentityRule,
    afind_identity,
    find_identity,
    unattributed,
)
from hindsight_lg.memory import HindsightMemory, RecallResult
from hindsight_lg.nodes._run import RecallNote, ledger_for
from hindsight_lg.nodes._turns import current_turn, is_ephemeral, latest_user_text

RECENT = 5  # messages before the query that a recall reads as context

# -- whose run -------------------------------------------------------------------


class Who:
    """The identity rule of one adapter, and what it does with an unattributed run.

    Args:
        adapter: the adapter's name, as the unattributed warning gives it.
        agent_id: a fixed agent id (else the run's context / ``configurable``).
        rule: whose memory (the documented default rule when ``None``).
        strict: raise when a run names no user; ``False`` warns once per
            thread and the adapter runs without memory.
    """

    def __init__(
        self,
        adapter: str,
        agent_id: str | None,
        rule: IdentityRule | None,
        strict: bool,
    ) -> None:
        self.adapter, self.agent_id = adapter, agent_id
        self.rule, self.strict = rule, strict

    def _settle(
        self, found: Identity | None, config: Mapping[str, Any]
    ) -> Identity | None:
        if found is None:
            thread = (config.get("configurable") or {}).get("thread_id")
            unattributed(self.adapter, thread, strict=self.strict)
        return found

    def find(self, config: Mapping[str, Any], context: Any = None) -> Identity | None:
        """Whose run this is (``None``: nobody, when not strict).

        Raises:
            ValueError: strict, and the run names no user.
        """
        found = find_identity(config, context, agent_id=self.agent_id, rule=self.rule)
        return self._settle(found, config)

    async def afind(
        self, config: Mapping[str, Any], context: Any = None
    ) -> Identity | None:
        """Async twin of :meth:`find` (reads the thread's history async)."""
        found = await afind_identity(
            config, context, agent_id=self.agent_id, rule=self.rule
        )
        return self._settle(found, config)


# -- what a recall asks and keeps ----------------------------------------------------


def recall_args(
    who: Identity, messages: Sequence[Any], options: Mapping[str, Any]
) -> dict[str, Any]:
    """Keyword arguments of ``recall`` for the latest message of ``messages``."""
    recent = [text_of(m) for m in messages[-RECENT - 1 : -1] if not is_ephemeral(m)]
    return {
        "namespace": who.namespace,
        "agent_id": who.agent_id,
        "context": recent,
        **options,
    }


def without_turn(result: RecallResult, turn: Sequence[Any]) -> RecallResult:
    """Drop memories captured from the current turn: the model already has them."""
    ids = {str(lookup(m, "id")) for m in turn if lookup(m, "id")}
    kept = [m for m in result.memories if not ids & set(m.record.source_ids)]
    if len(kept) == len(result.memories):
        return result
    return dataclasses.replace(result, memories=kept)


def _noted(
    memory: HindsightMemory,
    who: Identity,
    messages: Sequence[Any],
    query: str,
    result: RecallResult,
) -> RecallResult:
    result = without_turn(result, current_turn(messages))
    ledger_for(memory).note(who, RecallNote(query, result.ids, memory.clock()))
    return result


def recalled(
    memory: HindsightMemory,
    who: Identity | None,
    messages: Sequence[Any],
    options: Mapping[str, Any],
) -> RecallResult | None:
    """What the run of ``who`` recalls for its latest user message.

    Returns:
        ``None`` when there is nobody or no user text to recall for.
    """
    query = latest_user_text(messages)
    if not query or who is None:
        return None
    result = memory.recall(query, **recall_args(who, messages, options))
    return _noted(memory, who, messages, query, result)


async def arecalled(
    memory: HindsightMemory,
    who: Identity | None,
    messages: Sequence[Any],
    options: Mapping[str, Any],
) -> RecallResult | None:
    """Async twin of :func:`recalled`."""
    query = latest_user_text(messages)
    if not query or who is None:
        return None
    result = await memory.arecall(query, **recall_args(who, messages, options))
    return _noted(memory, who, messages, query, result)


# -- what a turn hands to capture ----------------------------------------------------


def hand_off(
    memory: HindsightMemory,
    who: Identity,
    messages: Sequence[Any],
    *,
    scope: str,
    tools: bool,
) -> None:
    """Queue the current turn of ``messages`` for capture; returns at once.

    The hand-off is the turn's whole cost: plain dicts, claims, a queue put.
    Encoding, embedding and the store run on the worker. ``submit`` fsyncs
    the capture spool: async callers run this off the event loop.
    """
    turn = capturable(current_turn(messages), tools=tools)
    submit_turn(memory, who, turn, scope=scope)


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


def claim(memory: HindsightMemory, who: Identity, messages: Sequence[Any]) -> None:
    """Mark ``messages`` as captured without capturing them.

    Claimed by the keys ``submit`` claims a turn's messages by, so that no
    capture path (node, middleware, bridging saver) captures them later.
    """
    storable = [m for m in messages if _storable(m)]
    memory.worker.claim_messages(who.namespace, storable)


def _storable(message: Any) -> bool:
    try:
        text = text_of(message)
        text.encode("utf-8")
    except (ValueError, TypeError):  # bytes content, a lone surrogate
        return False
    return "\x00" not in text
