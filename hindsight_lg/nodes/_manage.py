"""What the manage tool writes, and where its call stands in the run's thread.

A memory the tool creates is attributed like a captured one: the run's
thread, and as source ids the user message the call answers and the
``AIMessage`` that made the call, so ``audit``, ``forget(thread_id=...)`` and
reflection see where it came from. The user message is then claimed
(:func:`~hindsight_lg.nodes._adapter.claim`): the model turned it into the
memory it just wrote, and no capture path may keep a second copy of it.

Ids come from clients. One a record cannot keep is left out rather than cut:
a cut id names no message of the thread, and attribution is worth nothing
then; it is never a reason to fail the call either.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.tools import ToolException
from pydantic import BaseModel, Field, model_validator

from hindsight_lg._messages import AI, HUMAN, lookup, role
from hindsight_lg.backends import (
    MAX_LABEL_BYTES,
    MAX_TEXT_BYTES,
    check_text,
    visible_to,
)
from hindsight_lg.identity import Identity
from hindsight_lg.memory import HindsightMemory
from hindsight_lg.model import Kind, MemoryRecord, SourceKind, Tier
from hindsight_lg.nodes._adapter import claim

KindName = Literal["preference", "fact", "task", "event", "rule"]
_ORIGIN = "memory_tool"  # meta["origin"] of the memories the manage tool creates


class ManageMemory(BaseModel):
    """Arguments of the manage tool."""

    action: Literal["create", "update", "delete"] = Field(
        description="create a new memory, update one by id, or delete one by id"
    )
    content: str | None = Field(
        default=None, description="the memory text (create and update)"
    )
    id: str | None = Field(
        default=None, description="the memory id, from search results (update, delete)"
    )
    kind: KindName = Field(default="fact", description="what sort of memory (create)")

    @model_validator(mode="after")
    def _complete(self) -> ManageMemory:
        if self.action in ("create", "update") and not (self.content or "").strip():
            raise ValueError(f"{self.action} needs 'content'")
        if self.action in ("update", "delete") and not self.id:
            raise ValueError(f"{self.action} needs the memory 'id' (from a search)")
        return self


@dataclass(frozen=True, slots=True)
class Call:
    """Where one manage call stands in its thread (empty outside a graph)."""

    asked: Any = None  # the user message the call answers
    message_id: str = ""  # the AIMessage that made the call
    call_id: str = ""

    def source_ids(self) -> list[str]:
        """The user message first (what the memory is about), then the call."""
        ids = (lookup(self.asked, "id"), self.message_id)
        return [str(i) for i in ids if i and _keepable(str(i))]


def _keepable(label: str) -> bool:
    """Whether a record can keep this id or thread as it is."""
    try:
        check_text(label, "label", MAX_LABEL_BYTES)
    except (TypeError, ValueError):
        return False
    return True


def _makes(message: Any, call_id: str) -> bool:
    calls = lookup(message, "tool_calls") or []
    return role(message) == AI and any(lookup(c, "id") == call_id for c in calls)


def call_in(messages: Sequence[Any], call_id: str) -> Call:
    """The call's place in the run's messages (the injected ``ToolRuntime``'s)."""
    at = next(
        (i for i in reversed(range(len(messages))) if _makes(messages[i], call_id)),
        len(messages),
    )
    asked = next((m for m in reversed(messages[:at]) if role(m) == HUMAN), None)
    made = messages[at] if at < len(messages) else None
    return Call(asked, str(lookup(made, "id") or ""), call_id)


def checked(args: ManageMemory) -> None:
    """A model's mistake in the arguments becomes an answer, not a failed run."""
    try:
        if args.content is not None:
            check_text(args.content, "content", MAX_TEXT_BYTES)
        if args.id is not None:
            check_text(args.id, "id", 64)
    except (TypeError, ValueError) as exc:
        raise ToolException(f"{exc}; fix the arguments and call again") from None


def new_record(
    memory: HindsightMemory, who: Identity, args: ManageMemory, call: Call
) -> MemoryRecord:
    """The memory a create writes, as ``remember()`` would, plus its origin.

    Built here because ``remember()`` keeps no thread, and the thread on the
    record is what ``audit``, ``forget(thread_id=...)`` and rollback read.
    Still agent-inferred: the words are the model's, not the user's.
    """
    kind, now, thread = Kind(args.kind), memory.clock(), who.thread_id or ""
    thread = thread if _keepable(thread) else ""
    content = (args.content or "").strip()
    return MemoryRecord(
        namespace=who.namespace,
        content=content,
        summary=content[:120],
        kind=kind,
        agent_id=who.agent_id or "",
        tier=Tier.PROCEDURAL if kind is Kind.RULE else Tier.SEMANTIC,
        event_time=now,
        created_at=now,
        importance=memory.policy.importance(kind),
        half_life_days=memory.policy.half_life(kind),
        source_kind=SourceKind.AGENT_INFERRED,
        thread_id=thread,
        source_ids=call.source_ids(),
        meta={"origin": _ORIGIN, "thread_id": thread, "tool_call_id": call.call_id},
    )


def claim_request(
    memory: HindsightMemory, who: Identity, args: ManageMemory, call: Call
) -> None:
    """Keep the user message a create or update came from out of capture.

    The model turned that message into the memory it just wrote; capturing
    the message as well (the middleware, the capture node, the bridging
    saver) would leave a second copy that a later correction of the first
    does not reach.
    """
    if args.action != "delete" and call.asked is not None:
        claim(memory, who, [call.asked])


def owned(memory: HindsightMemory, who: Identity, memory_id: str) -> MemoryRecord:
    """The memory ``memory_id`` of this run's tenant and agent (never another's).

    Another agent's private memory is answered as missing, exactly as search
    hides it: its id alone must not let this agent change it.

    Raises:
        ToolException: no such memory for this run (answered to the model).
    """
    record = memory.get(who.namespace, memory_id)
    hidden = record is not None and bool(who.agent_id)
    if hidden and record is not None:
        hidden = not visible_to(record, who.agent_id or "")
    if record is None or hidden or record.status.value == "deleted":
        raise ToolException(f"no memory with id {memory_id!r}: search for it first")
    return record


def apply(
    memory: HindsightMemory, who: Identity, args: ManageMemory, call: Call
) -> str:
    """Create, update or delete one memory of the run; the answer says which."""
    checked(args)
    if args.action == "create":
        record = memory.put_record(new_record(memory, who, args, call))
        return f"created memory {record.id}"
    record = owned(memory, who, args.id or "")
    if args.action == "update":
        memory.update(who.namespace, record.id, content=args.content)
        return f"updated memory {record.id}"
    memory.forget(who.namespace, [record.id])
    return f"deleted memory {record.id}"


async def aapply(
    memory: HindsightMemory, who: Identity, args: ManageMemory, call: Call
) -> str:
    """Async twin of :func:`apply`."""
    checked(args)
    if args.action == "create":
        note = new_record(memory, who, args, call)
        record = await asyncio.to_thread(memory.put_record, note)
        return f"created memory {record.id}"
    record = owned(memory, who, args.id or "")
    if args.action == "update":
        await memory.aupdate(who.namespace, record.id, content=args.content)
        return f"updated memory {record.id}"
    await memory.aforget(who.namespace, [record.id])
    return f"deleted memory {record.id}"
