"""One identity rule: the documented order, a custom rule, resumes, unattributed runs."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import structlog
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from hindsight_lg import HindsightMemory
from hindsight_lg.checkpointers import HindsightSaver
from hindsight_lg.identity import default_rule, find_identity
from hindsight_lg.nodes import add_hindsight
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend, capture_spans

FACT = "I am allergic to peanuts and I love jasmine tea."


@dataclass
class Ctx:
    user_id: str


class ServerUser:
    """Stands in for LangGraph server's authenticated user object."""

    identity = "auth-user"


def test_default_order_server_auth_first_then_context_then_configurable() -> None:
    """Server auth wins over langgraph_user_id, which wins over context and user_id."""
    full = {
        "langgraph_auth_user": ServerUser(),
        "langgraph_auth_user_id": "auth-id",
        "langgraph_user_id": "lg-user",
        "user_id": "plain",
    }
    assert default_rule({"configurable": full}, Ctx("ctx")) == "auth-user"
    full.pop("langgraph_auth_user")
    assert default_rule({"configurable": full}, Ctx("ctx")) == "auth-id"
    full.pop("langgraph_auth_user_id")
    assert default_rule({"configurable": full}, Ctx("ctx")) == "lg-user"
    full.pop("langgraph_user_id")
    assert default_rule({"configurable": full}, Ctx("ctx")) == "ctx"
    assert default_rule({"configurable": full}, {"user_id": "dict-ctx"}) == "dict-ctx"
    assert default_rule({"configurable": full}, None) == "plain"
    assert default_rule({"configurable": {}}, None) is None


def test_identity_maps_the_user_to_its_tenant() -> None:
    """The identity's namespace is the user's tenant: the id itself when plain."""
    plain = find_identity({"configurable": {"user_id": "maya@x.com"}})
    odd = find_identity({"configurable": {"langgraph_user_id": "%/x"}})
    assert plain is not None and plain.namespace == "maya@x.com"
    assert odd is not None and odd.namespace == "%@%25%2Fx"
    assert odd.user_id == "%/x"


def _agent(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(f"noted ({len(state['messages'])})")]}


def _approve(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("approve?")
    return {"messages": [AIMessage(f"approved: {answer}")]}


def _graph(memory: HindsightMemory, saver: Any, **options: Any) -> Any:
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent)
    builder.add_node("approve", _approve)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", "approve")
    add_hindsight(builder, agent="agent", memory=memory, reflect=False, **options)
    return builder.compile(checkpointer=saver)


@pytest.fixture
def memory() -> Any:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def test_resume_with_only_thread_id_finds_the_thread_user(
    memory: HindsightMemory, tmp_path: Path
) -> None:
    """Command(resume=...) with only thread_id completes and captures for the user."""
    path = tmp_path / "threads.sqlite"
    first = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    graph = _graph(memory, first)
    cfg = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    graph.invoke({"messages": [HumanMessage(FACT)]}, cfg)
    assert graph.get_state(cfg).next == ("approve",)
    # A new saver object: nothing remembered in-process, only the history.
    again = _graph(memory, SqliteSaver(sqlite3.connect(path, check_same_thread=False)))
    only_thread = {"configurable": {"thread_id": "t1"}}
    again.invoke(Command(resume="yes"), only_thread)
    assert again.get_state(only_thread).next == ()
    memory.flush()
    assert any("jasmine" in r.content for r in memory.list_memories("u1"))


def test_forks_from_state_history_need_no_user(memory: HindsightMemory) -> None:
    """Replaying or forking a past checkpoint by id keeps the thread's user."""
    graph = _graph(memory, InMemorySaver())
    cfg = {"configurable": {"thread_id": "t1", "user_id": "u1"}}
    graph.invoke({"messages": [HumanMessage(FACT)]}, cfg)
    graph.invoke(Command(resume="yes"), {"configurable": {"thread_id": "t1"}})
    past = [s for s in graph.get_state_history(cfg) if s.next == ("agent",)][0]
    fork = graph.update_state(past.config, {"messages": [HumanMessage("I own a cat.")]})
    graph.invoke(None, fork)
    graph.invoke(Command(resume="ok"), {"configurable": {"thread_id": "t1"}})
    memory.flush()
    assert any("cat" in r.content for r in memory.list_memories("u1"))


def test_a_custom_rule_reaches_nodes_and_saver(memory: HindsightMemory) -> None:
    """identity= replaces the rule: a tenant id from context, in nodes and the saver."""

    def by_tenant(config: Any, context: Any) -> str | None:
        return (config.get("configurable") or {}).get("tenant")

    saver = HindsightSaver(InMemorySaver(), memory, identity=by_tenant)
    graph = _graph(memory, saver, identity=by_tenant)
    cfg = {"configurable": {"thread_id": "t1", "tenant": "acme", "user_id": "u1"}}
    graph.invoke({"messages": [HumanMessage(FACT)]}, cfg)
    memory.flush()
    assert memory.list_memories("acme")
    assert memory.list_memories("u1") == []


def test_unattributed_saver_warns_once_per_thread_with_a_span_event(
    memory: HindsightMemory,
) -> None:
    """A bridged run with no user logs one warning and one span event per thread."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent)
    builder.add_edge(START, "agent")
    graph = builder.compile(checkpointer=HindsightSaver(InMemorySaver(), memory))
    cfg = {"configurable": {"thread_id": "nobody-1"}}
    with structlog.testing.capture_logs() as logs, capture_spans() as spans:
        graph.invoke({"messages": [HumanMessage(FACT)]}, cfg)
        graph.invoke({"messages": [HumanMessage("and again")]}, cfg)
    warned = [e for e in logs if e["event"] == "memory_unattributed"]
    events = [e for s in spans for e in s.events if e.name == "hindsight.unattributed"]
    assert len(warned) == 1 and warned[0]["log_level"] == "warning"
    assert len(events) == 1
    memory.flush()
    assert memory.namespaces() == []


def test_strict_saver_raises(memory: HindsightMemory) -> None:
    """HindsightSaver(strict=True) refuses a run that names no user."""
    builder = StateGraph(MessagesState)
    builder.add_node("agent", _agent)
    builder.add_edge(START, "agent")
    saver = HindsightSaver(InMemorySaver(), memory, strict=True)
    graph = builder.compile(checkpointer=saver)
    with pytest.raises(ValueError, match="user_id"):
        graph.invoke(
            {"messages": [HumanMessage(FACT)]}, {"configurable": {"thread_id": "x"}}
        )


def test_lenient_nodes_run_without_memory_and_warn(memory: HindsightMemory) -> None:
    """add_hindsight(strict=False) answers without memory and warns once."""
    graph = _graph(memory, InMemorySaver(), strict=False)
    with structlog.testing.capture_logs() as logs:
        graph.invoke(
            {"messages": [HumanMessage(FACT)]}, {"configurable": {"thread_id": "n"}}
        )
    assert [e["adapter"] for e in logs if e["event"] == "memory_unattributed"] == [
        "recall_node",
        "capture_node",
    ]
    memory.flush()
    assert memory.namespaces() == []


def test_server_auth_user_meets_store_items_under_its_identity(
    memory: HindsightMemory,
) -> None:
    """On a server, ("memories", auth identity) store items reach that user's recall."""
    from hindsight_lg.store import HindsightStore

    store = HindsightStore(memory)
    store.put(("memories", "auth-user"), "diet", {"content": "The user is vegetarian"})
    seen: list[str] = []

    def agent(state: MessagesState) -> dict[str, Any]:
        seen.extend(str(m.content) for m in state["messages"])
        return {"messages": [AIMessage("ok")]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    add_hindsight(builder, memory=memory, reflect=False, timeout=None)
    graph = builder.compile(checkpointer=InMemorySaver(), store=store)
    server = {
        "thread_id": "s1",
        "user_id": "client-says-someone-else",
        "langgraph_auth_user": ServerUser(),
        "langgraph_auth_user_id": "auth-user",
    }
    graph.invoke(
        {"messages": [HumanMessage("Am I vegetarian?")]}, {"configurable": server}
    )
    assert any("vegetarian" in text and "memories" in text.lower() for text in seen)
