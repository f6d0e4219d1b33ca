"""``add_hindsight``: wire recall -> agent -> capture, with a reflection branch."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from langchain_core.runnables import RunnableLambda
from langgraph.graph import END, START, StateGraph

from hindsight_lg.identity import IdentityRule
from hindsight_lg.memory import HindsightMemory
from hindsight_lg.nodes._core import (
    Into,
    _messages,
    capture_node,
    recall_node,
    reflect_node,
)
from hindsight_lg.nodes._run import ReflectMode
from hindsight_lg.nodes._turns import is_final_answer
from hindsight_lg.nodes._view import MEMORY_CHANNEL, Blocks, agent_view, tokenized

RECALL, CAPTURE, REFLECT = "hindsight_recall", "hindsight_capture", "hindsight_reflect"


def _route_end(out: Any) -> Any:
    if isinstance(out, list):
        return [_route_end(o) for o in out]
    return CAPTURE if out == END else out


def _after_capture(state: Any) -> str:
    messages = _messages(state)
    return REFLECT if messages and is_final_answer(messages[-1]) else END


def _rewire_entry(builder: StateGraph[Any, Any, Any, Any], agent: str) -> None:
    """START -> agent becomes START -> recall -> agent."""
    starts = {(s, e) for s, e in builder.edges if s == START}
    if (START, agent) in starts:
        builder.edges.discard((START, agent))
    elif starts or builder.branches.get(START):
        raise ValueError(
            f"add_hindsight expects {agent!r} to be the graph's entry: add "
            f"builder.add_edge(START, {agent!r}) (or wire recall_node yourself)"
        )
    builder.edges.add((START, RECALL))
    builder.edges.add((RECALL, agent))


def _rewire_exits(builder: StateGraph[Any, Any, Any, Any], agent: str) -> None:
    """Every way to END now passes through capture first."""
    found = False
    for start, end in list(builder.edges):
        if end == END and start not in (CAPTURE, REFLECT):
            builder.edges.discard((start, end))
            builder.edges.add((start, CAPTURE))
            found = True
    for branches in builder.branches.values():
        for name, spec in list(branches.items()):
            if spec.ends is None:
                # No path map: the router may return END itself, so map its output.
                routed = spec.path | RunnableLambda(_route_end)
                branches[name] = spec._replace(path=routed)
                found = True
            elif END in spec.ends.values():
                ends: dict[Hashable, str] = {
                    k: CAPTURE if v == END else v for k, v in spec.ends.items()
                }
                branches[name] = spec._replace(ends=ends)
                found = True
    if not found:
        builder.edges.add((agent, CAPTURE))


def add_hindsight(
    builder: StateGraph[Any, Any, Any, Any],
    *,
    agent: str = "agent",
    memory: HindsightMemory,
    reflect: bool | ReflectMode = True,
    llm: Any = None,
    into: Into = "messages",
    agent_id: str | None = None,
    scope: str = "private",
    identity: IdentityRule | None = None,
    strict: bool = True,
    capture_tools: bool = False,
    **recall_options: Any,
) -> StateGraph[Any, Any, Any, Any]:
    """Add memory to a graph: recall before ``agent``, capture after, reflect at the end.

    ``START -> agent`` becomes ``START -> recall -> agent``; every edge or
    branch that reached ``END`` goes to capture instead; after capture, runs
    that ended with a final answer (no tool calls) take the reflection branch.

    Args:
        builder: an uncompiled ``StateGraph`` whose state has ``messages``.
        agent: the node that calls the model.
        memory: the engine.
        reflect: add the reflection branch: ``True`` or ``"background"`` runs
            it on the capture worker (the run does not wait for it;
            ``memory.flush()`` does), ``"sync"`` inline, ``False`` not at all.
        llm: chat model for reflection (heuristics without one).
        into: ``"messages"`` (default): the agent node sees the memories as a
            system message next to the latest user message on every call,
            but they are kept in a private channel, never in the thread's
            ``messages``, so ``stream_mode="messages"`` clients and
            ``get_state()`` never see them; ``"state"``: written to
            ``state["memories"]`` for your agent to place (see
            :func:`recall_node`).
        agent_id: fixed agent id (else from context / ``configurable``).
        scope: scope of captured memories.
        identity: whose memory, for all three nodes (see
            :mod:`hindsight_lg.identity`; the documented default rule when
            ``None``).
        strict: raise when a run names no user (and its thread names none
            either); ``False`` logs a warning once per thread and runs
            without memory.
        capture_tools: also capture what the assistant said right after a
            tool result (see :func:`capture_node`).
        **recall_options: passed to :func:`recall_node` (``budget_tokens``, ``k``...).

    Returns:
        The same builder, ready to ``compile()``.

    Raises:
        ValueError: unknown ``agent``, names already taken, or an entry that is
            not the agent.

    Example:
        >>> from langgraph.graph import MessagesState, StateGraph
        >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
        >>> builder = StateGraph(MessagesState)
        >>> _ = builder.add_node("agent", lambda state: {"messages": []})
        >>> _ = builder.add_edge(START, "agent")
        >>> memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
        >>> graph = add_hindsight(builder, memory=memory).compile()
        >>> sorted(graph.nodes)[:3]
        ['__start__', 'agent', 'hindsight_capture']
    """
    if agent not in builder.nodes:
        raise ValueError(f"no node named {agent!r}; pass agent=<your model node>")
    taken = {RECALL, CAPTURE, REFLECT} & set(builder.nodes)
    if taken:
        raise ValueError(f"add_hindsight was already applied (nodes {sorted(taken)})")
    who: dict[str, Any] = {"agent_id": agent_id, "identity": identity, "strict": strict}
    if into == "messages":
        # The block reaches the model through the agent's view, never the
        # thread's messages: no stream emits it, no paused state shows it.
        position = recall_options.pop("position", "after")
        recall = recall_node(
            memory, into="state", state_key=MEMORY_CHANNEL, **who, **recall_options
        )
        blocks = Blocks()
        schema = agent_view(builder, agent, position, recall, blocks)
        builder.add_node(RECALL, tokenized(recall, blocks), input_schema=schema)
    else:
        builder.add_node(
            RECALL, recall_node(memory, into=into, **who, **recall_options)
        )
    builder.add_node(
        CAPTURE,
        capture_node(memory, scope=scope, capture_tools=capture_tools, **who),
    )
    _rewire_entry(builder, agent)
    _rewire_exits(builder, agent)
    if reflect:
        mode: ReflectMode = "background" if reflect is True else reflect
        builder.add_node(REFLECT, reflect_node(memory, llm=llm, mode=mode, **who))
        builder.add_conditional_edges(CAPTURE, _after_capture, [REFLECT, END])
        builder.add_edge(REFLECT, END)
    else:
        builder.add_edge(CAPTURE, END)
    return builder
