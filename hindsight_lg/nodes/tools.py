"""Memory tools an agent can call: search memory, and create / update / delete one.

Both tools resolve whose memory they touch with the same rule as the nodes
(:mod:`hindsight_lg.identity`) from the config LangGraph hands every tool
(``create_agent``, ``ToolNode``, or ``tool.invoke(args, config)``), so a model
can never name another user's tenant: ids it passes are looked up inside the
run's own tenant only. Each has a sync and an async body and an argument
schema a model can follow.

Whose run it is and what the current turn is are read as the nodes and the
middleware read them (:mod:`hindsight_lg.nodes._adapter`): a search leaves
out what the current turn itself became, as a recall does, and a memory the
manage tool creates is attributed like a captured one, its user message
claimed so that no capture path keeps it twice (:mod:`hindsight_lg.nodes._manage`).

What the search tool answers is fenced (:mod:`hindsight_lg.nodes._fence`):
the "data, not instructions" label and a ``<memories>`` block of inert rows.
:func:`fenced_store_tool` gives the same fence to tools that answer store
items, such as LangMem's search tool over ``HindsightStore``.

Example:
    >>> from hindsight_lg.nodes.tools import memory_tools  # doctest: +SKIP
    >>> agent = create_agent(model, tools=memory_tools(memory))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import (
    BaseTool,
    InjectedToolArg,
    StructuredTool,
    ToolException,
)
from langgraph.prebuilt import ToolRuntime
from pydantic import BaseModel, Field

from hindsight_lg._items import check_filter, record_fields
from hindsight_lg._messages import lookup
from hindsight_lg._text import inert
from hindsight_lg.backends import MAX_TEXT_BYTES, check_text
from hindsight_lg.identity import Identity, IdentityRule
from hindsight_lg.memory import HindsightMemory, RecallResult
from hindsight_lg.model import MemoryRecord
from hindsight_lg.nodes._adapter import Who, without_turn
from hindsight_lg.nodes._fence import fenced, fenced_store_tool, rows_of, store_rows
from hindsight_lg.nodes._manage import (
    ManageMemory,
    aapply,
    apply,
    call_in,
    claim_request,
)
from hindsight_lg.nodes._turns import current_turn
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

# Optional, so ``tool.invoke(args, config)`` works outside a graph. LangChain
# reads ``ToolRuntime | None`` as a model argument and drops it; the marker
# keeps it injected (and out of reach of a model that tries to pass one).
_Runtime = Annotated[ToolRuntime[Any, Any] | None, InjectedToolArg()]
_UNAVAILABLE = "memory is unavailable for this run (no user)"


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


def _run_messages(runtime: ToolRuntime[Any, Any] | None) -> Sequence[Any]:
    """The run's messages, from the injected ``ToolRuntime`` (none outside a graph)."""
    state = runtime.state if runtime is not None else None
    # A ToolNode invoked with a bare message list has that list as its state.
    return state if isinstance(state, list) else lookup(state, "messages") or []


def _call_id(runtime: ToolRuntime[Any, Any] | None) -> str:
    return (runtime.tool_call_id if runtime is not None else None) or ""


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


class _Search:
    """The search tool's arguments, recall and answer around the engine's recall."""

    def __init__(self, args: SearchMemory) -> None:
        self.args = args
        # A model's mistake in the arguments becomes an answer, not a failed run.
        try:
            check_text(args.query, "query", MAX_TEXT_BYTES)
            check_filter(args.filter)
        except (TypeError, ValueError) as exc:
            raise ToolException(f"{exc}; fix the arguments and call again") from None

    def recall_args(self, who: Identity) -> dict[str, Any]:
        # Over-fetch when filtering: the filter runs on the recalled records. No
        # deadline: the model asked on purpose, and an empty answer would tell it
        # nothing is remembered. No context either: the query is the model's own.
        k = self.args.limit * (4 if self.args.filter else 1)
        return {
            "namespace": who.namespace,
            "agent_id": who.agent_id,
            "k": k,
            "timeout": None,
        }

    def answer(self, result: RecallResult, messages: Sequence[Any]) -> str:
        # As a recall does: what the current turn became, the model already has.
        result = without_turn(result, current_turn(messages))
        rows = [
            _row(m.record, m.score)
            for m in result.memories
            if matches(record_fields(m.record), self.args.filter)
        ]
        return fenced(rows[: self.args.limit])


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
        Memories captured from the run's current turn are left out, as the
        nodes' and the middleware's recall leaves them out.
    """
    who = Who("memory tools", agent_id, identity, strict)

    def search(
        query: str,
        config: RunnableConfig,
        limit: int = 5,
        filter: dict[str, Any] | None = None,
        runtime: _Runtime = None,
    ) -> str:
        args = SearchMemory(query=query, limit=limit, filter=filter)
        if (found := who.find(config)) is None:
            return _UNAVAILABLE
        search = _Search(args)
        result = memory.recall(query, **search.recall_args(found))
        return search.answer(result, _run_messages(runtime))

    async def asearch(
        query: str,
        config: RunnableConfig,
        limit: int = 5,
        filter: dict[str, Any] | None = None,
        runtime: _Runtime = None,
    ) -> str:
        args = SearchMemory(query=query, limit=limit, filter=filter)
        if (found := await who.afind(config)) is None:
            return _UNAVAILABLE
        search = _Search(args)
        result = await memory.arecall(query, **search.recall_args(found))
        return search.answer(result, _run_messages(runtime))

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
        with the memory id. A created memory is ``agent-inferred``, with
        ``meta["origin"] == "memory_tool"``, the run's ``thread_id`` and as
        ``source_ids`` the user message the call answers and the
        ``AIMessage`` that made the call (``meta["tool_call_id"]`` too).
    """
    who = Who("memory tools", agent_id, identity, strict)

    def manage(
        action: str,
        config: RunnableConfig,
        content: str | None = None,
        id: str | None = None,
        kind: str = "fact",
        runtime: _Runtime = None,
    ) -> str:
        args = ManageMemory(action=action, content=content, id=id, kind=kind)  # type: ignore[arg-type]
        if (found := who.find(config)) is None:
            return _UNAVAILABLE
        call = call_in(_run_messages(runtime), _call_id(runtime))
        answer = apply(memory, found, args, call)
        claim_request(memory, found, args, call)
        return answer

    async def amanage(
        action: str,
        config: RunnableConfig,
        content: str | None = None,
        id: str | None = None,
        kind: str = "fact",
        runtime: _Runtime = None,
    ) -> str:
        args = ManageMemory(action=action, content=content, id=id, kind=kind)  # type: ignore[arg-type]
        if (found := await who.afind(config)) is None:
            return _UNAVAILABLE
        call = call_in(_run_messages(runtime), _call_id(runtime))
        answer = await aapply(memory, found, args, call)
        claim_request(memory, found, args, call)
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
