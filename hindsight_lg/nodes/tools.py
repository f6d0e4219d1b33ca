"""Memory tools an agent can call: search memory, and create / update / delete one.

Both tools resolve whose memory they touch with the same rule as the nodes
(:mod:`hindsight_lg.identity`) from the config LangGraph hands every tool
(``create_agent``, ``ToolNode``, or ``tool.invoke(args, config)``), so a model
can never name another user's tenant: ids it passes are looked up inside the
run's own tenant only. Each has a sync and an async body and an argument
schema a model can follow.

What the search tool answers is fenced (:mod:`hindsight_lg.nodes._fence`):
the "data, not instructions" label and a ``<memories>`` block of inert rows.
:func:`fenced_store_tool` gives the same fence to tools that answer store
items, such as LangMem's search tool over ``HindsightStore``.

Example:
    >>> from hindsight_lg.nodes.tools import memory_tools  # doctest: +SKIP
    >>> agent = create_agent(model, tools=memory_tools(memory))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langgraph.prebuilt import InjectedState
from pydantic import BaseModel, Field, model_validator

from hindsight_lg._items import check_filter, record_fields
from hindsight_lg._messages import HUMAN, message_key, plain_messages, role
from hindsight_lg._text import inert
from hindsight_lg.backends import MAX_TEXT_BYTES, check_text, visible_to
from hindsight_lg.identity import (
    Identity,
    IdentityRule,
    afind_identity,
    find_identity,
    unattributed,
)
from hindsight_lg.memory import HindsightMemory, RecallResult
from hindsight_lg.model import Kind, MemoryRecord, SourceKind
from hindsight_lg.nodes._fence import fenced, fenced_store_tool, rows_of, store_rows
from hindsight_lg.store import matches

__all__ = [
    "ManageMemory",
    "SearchMemory",
    "fenced",
    "fenced_store_tool",
    "manage_memory_tool",
    "memory_tools",
    "rows_of",
    "search_memory_tool",
    "store_rows",
]

KindName = Literal["preference", "fact", "task", "event", "rule"]


class SearchMemory(BaseModel):
    """Arguments of the search tool."""

    query: str = Field(description="what to look for, in plain words")
    limit: int = Field(default=5, ge=1, le=50, description="at most this many")
    filter: dict[str, Any] | None = Field(
        default=None,
        description=(
            "optional conditions on memory fields, e.g. {'kind': 'preference'} "
            "or {'importance': {'$gte': 0.5}}"
        ),
    )


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


def _when(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")


def _row(record: MemoryRecord, score: float | None = None) -> dict[str, Any]:
    # Stored text is data: inert (one line, nothing hidden, no tag can close
    # the block), as in RecallResult.to_prompt().
    row: dict[str, Any] = {
        "id": record.id,
        "content": inert(record.content),
        "kind": record.kind.value,
        "when": _when(record.event_time),
        "confidence": round(record.confidence, 2),
    }
    if score is not None:
        row["score"] = round(score, 4)
    return row


class _Tools:
    """What both tools share: the engine, the identity rule, the answers."""

    def __init__(
        self,
        memory: HindsightMemory,
        rule: IdentityRule | None,
        agent_id: str | None,
        strict: bool,
    ) -> None:
        self.memory, self.rule, self.agent_id, self.strict = (
            memory,
            rule,
            agent_id,
            strict,
        )

    def _settle(self, found: Identity | None, config: Mapping[str, Any]) -> Identity:
        if found is None:
            thread = (config.get("configurable") or {}).get("thread_id")
            unattributed("memory tools", thread, strict=self.strict)
            raise LookupError("no user for this run")  # only reached when lenient
        return found

    def who(self, config: RunnableConfig) -> Identity:
        found = find_identity(config, agent_id=self.agent_id, rule=self.rule)
        return self._settle(found, config)

    async def awho(self, config: RunnableConfig) -> Identity:
        found = await afind_identity(config, agent_id=self.agent_id, rule=self.rule)
        return self._settle(found, config)

    # -- search -------------------------------------------------------------

    def recall_args(self, who: Identity, args: SearchMemory) -> dict[str, Any]:
        # Over-fetch when filtering: the filter runs on the recalled records. No
        # deadline: the model asked on purpose, and an empty answer would tell it
        # nothing is remembered.
        k = args.limit * (4 if args.filter else 1)
        return {
            "namespace": who.namespace,
            "agent_id": who.agent_id,
            "k": k,
            "timeout": None,
        }

    def found(self, args: SearchMemory, result: RecallResult) -> str:
        rows = [
            _row(m.record, m.score)
            for m in result.memories
            if matches(record_fields(m.record), args.filter)
        ]
        return fenced(rows[: args.limit])

    @staticmethod
    def checked(args: SearchMemory) -> None:
        """A model's mistake in the arguments becomes an answer, not a failed run."""
        try:
            check_text(args.query, "query", MAX_TEXT_BYTES)
            check_filter(args.filter)
        except (TypeError, ValueError) as exc:
            raise ToolException(f"{exc}; fix the arguments and call again") from None

    # -- manage -------------------------------------------------------------

    def create(self, who: Identity, args: ManageMemory) -> dict[str, Any]:
        return {
            "namespace": who.namespace,
            "kind": Kind(args.kind),
            "agent_id": who.agent_id,
            "source_kind": SourceKind.AGENT_INFERRED,
            "meta": {"origin": "memory_tool", "thread_id": who.thread_id or ""},
        }

    def claim_request(
        self, who: Identity, args: ManageMemory, messages: list[Any] | None
    ) -> None:
        """Keep the user message a create or update came from out of capture.

        The model turned that message into the memory it just wrote; capturing
        the message as well (the middleware, the capture node) would leave a
        second copy that a later correction of the first does not reach. The
        claim is the one every capture path checks before it captures.
        """
        if args.action == "delete" or not messages:
            return
        asked = next((m for m in reversed(messages) if role(m) == HUMAN), None)
        if asked is not None:
            plain = plain_messages([asked])
            self.memory.worker.claim(who.namespace, [message_key(m) for m in plain])

    def owned(self, who: Identity, memory_id: str) -> MemoryRecord:
        """The memory ``memory_id`` of this run's tenant and agent (never another's).

        Another agent's private memory is answered as missing, exactly as
        search hides it: its id alone must not let this agent change it.
        """
        record = self.memory.get(who.namespace, memory_id)
        hidden = record is not None and bool(who.agent_id)
        if hidden and record is not None:
            hidden = not visible_to(record, who.agent_id or "")
        if record is None or hidden or record.status.value == "deleted":
            # A model's mistake: the tool answers it instead of failing the run.
            raise ToolException(f"no memory with id {memory_id!r}: search for it first")
        return record


def _manage_checked(args: ManageMemory) -> None:
    try:
        if args.content is not None:
            check_text(args.content, "content", MAX_TEXT_BYTES)
        if args.id is not None:
            check_text(args.id, "id", 64)
    except (TypeError, ValueError) as exc:
        raise ToolException(f"{exc}; fix the arguments and call again") from None


def _answer_mistake(error: Exception) -> str:
    """What the model reads when its arguments do not fit the schema."""
    return f"invalid arguments ({str(error)[:500]}); fix them and call again"


def search_memory_tool(
    memory: HindsightMemory,
    *,
    identity: IdentityRule | None = None,
    agent_id: str | None = None,
    strict: bool = True,
    name: str = "search_memory",
) -> BaseTool:
    """A tool that searches the run's user's long-term memory.

    Args:
        memory: the engine.
        identity: whose memory (the documented default rule when ``None``).
        agent_id: fixed agent id (private memories of other agents stay hidden).
        strict: raise when the run names no user; ``False`` answers the model
            that memory is unavailable and logs a warning once per thread.
        name: the tool's name.

    Returns:
        A tool taking :class:`SearchMemory` arguments and answering the
        "data, not instructions" label and a ``<memories>`` block with one
        JSON object ``{id, content, kind, when, confidence, score}`` a line,
        content made inert (see :func:`fenced`, :func:`rows_of`). Argument
        mistakes (a bad filter operator, a lone surrogate) are answered too.
    """
    tools = _Tools(memory, identity, agent_id, strict)

    def search(
        query: str,
        config: RunnableConfig,
        limit: int = 5,
        filter: dict[str, Any] | None = None,
    ) -> str:
        args = SearchMemory(query=query, limit=limit, filter=filter)
        try:
            who = tools.who(config)
        except LookupError:
            return "memory is unavailable for this run (no user)"
        tools.checked(args)
        result = memory.recall(query, **tools.recall_args(who, args))
        return tools.found(args, result)

    async def asearch(
        query: str,
        config: RunnableConfig,
        limit: int = 5,
        filter: dict[str, Any] | None = None,
    ) -> str:
        args = SearchMemory(query=query, limit=limit, filter=filter)
        try:
            who = await tools.awho(config)
        except LookupError:
            return "memory is unavailable for this run (no user)"
        tools.checked(args)
        result = await memory.arecall(query, **tools.recall_args(who, args))
        return tools.found(args, result)

    return StructuredTool.from_function(
        func=search,
        coroutine=asearch,
        name=name,
        description=(
            "Search long-term memory about the user (preferences, facts, "
            "past events) before answering; returns memories with their ids."
        ),
        args_schema=SearchMemory,
        handle_tool_error=True,
        handle_validation_error=_answer_mistake,
    )


def manage_memory_tool(
    memory: HindsightMemory,
    *,
    identity: IdentityRule | None = None,
    agent_id: str | None = None,
    strict: bool = True,
    name: str = "manage_memory",
) -> BaseTool:
    """A tool that creates, updates or deletes one memory of the run's user.

    Args:
        memory: the engine.
        identity: whose memory (the documented default rule when ``None``).
        agent_id: fixed agent id for created memories.
        strict: raise when the run names no user; ``False`` answers the model
            that memory is unavailable and logs a warning once per thread.
        name: the tool's name.

    Returns:
        A tool taking :class:`ManageMemory` arguments; it answers what it did,
        with the memory id.
    """
    tools = _Tools(memory, identity, agent_id, strict)

    def run(who: Identity, args: ManageMemory) -> str:
        _manage_checked(args)
        if args.action == "create":
            record = memory.remember(args.content or "", **tools.create(who, args))
            return f"created memory {record.id}"
        record = tools.owned(who, args.id or "")
        if args.action == "update":
            memory.update(who.namespace, record.id, content=args.content)
            return f"updated memory {record.id}"
        memory.forget(who.namespace, [record.id])
        return f"deleted memory {record.id}"

    async def arun(who: Identity, args: ManageMemory) -> str:
        _manage_checked(args)
        if args.action == "create":
            record = await memory.aremember(
                args.content or "", **tools.create(who, args)
            )
            return f"created memory {record.id}"
        record = tools.owned(who, args.id or "")
        if args.action == "update":
            await memory.aupdate(who.namespace, record.id, content=args.content)
            return f"updated memory {record.id}"
        await memory.aforget(who.namespace, [record.id])
        return f"deleted memory {record.id}"

    def manage(
        action: str,
        config: RunnableConfig,
        content: str | None = None,
        id: str | None = None,
        kind: str = "fact",
        messages: Annotated[list[Any] | None, InjectedState("messages")] = None,
    ) -> str:
        args = ManageMemory(action=action, content=content, id=id, kind=kind)  # type: ignore[arg-type]
        try:
            who = tools.who(config)
        except LookupError:
            return "memory is unavailable for this run (no user)"
        answer = run(who, args)
        tools.claim_request(who, args, messages)
        return answer

    async def amanage(
        action: str,
        config: RunnableConfig,
        content: str | None = None,
        id: str | None = None,
        kind: str = "fact",
        messages: Annotated[list[Any] | None, InjectedState("messages")] = None,
    ) -> str:
        args = ManageMemory(action=action, content=content, id=id, kind=kind)  # type: ignore[arg-type]
        try:
            who = await tools.awho(config)
        except LookupError:
            return "memory is unavailable for this run (no user)"
        answer = await arun(who, args)
        tools.claim_request(who, args, messages)
        return answer

    return StructuredTool.from_function(
        func=manage,
        coroutine=amanage,
        name=name,
        description=(
            "Save something worth remembering about the user (action='create'), "
            "correct a memory (action='update' with its id and the new content) "
            "or remove one (action='delete' with its id)."
        ),
        args_schema=ManageMemory,
        handle_tool_error=True,
        handle_validation_error=_answer_mistake,
    )


def memory_tools(memory: HindsightMemory, **options: Any) -> list[BaseTool]:
    """Both tools, sharing ``options`` (``identity``, ``agent_id``, ``strict``)."""
    return [
        search_memory_tool(memory, **options),
        manage_memory_tool(memory, **options),
    ]
