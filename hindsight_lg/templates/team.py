"""A multi-agent team: a planner and a booker share team-scope memory beside private memory.

Run: ``python examples/team.py`` (offline) or with ``HINDSIGHT_CHAT_MODEL=...``.
Both agents serve the same user (namespace). What the planner learns in team
scope the booker recalls; the planner's private notes stay its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph

from hindsight_lg import HindsightMemory
from hindsight_lg.checkpointers import HindsightSaver
from hindsight_lg.nodes import add_hindsight
from hindsight_lg.templates._chat import chat_model, open_memory

USER = "acme-travel-u1"


def agent_graph(memory: HindsightMemory, model: Any, name: str, scope: str) -> Any:
    """One team member: its own agent id; captures in ``scope``."""

    def agent(state: MessagesState) -> dict[str, Any]:
        prompt = ("system", f"You are the {name} of a travel team.")
        return {"messages": [model.invoke([prompt, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    add_hindsight(builder, memory=memory, agent_id=name, scope=scope)
    saver = HindsightSaver(InMemorySaver(), memory, capture=False)
    return builder.compile(checkpointer=saver)


def run(
    memory: HindsightMemory, model: Any, out: Callable[[str], None] = print
) -> list[str]:
    """Planner learns (team scope + a private note); booker and planner are asked."""
    planner = agent_graph(memory, model, "planner", scope="team")
    booker = agent_graph(memory, model, "booker", scope="private")
    memory.remember(
        "Planner's private note: the client haggles, open with the premium option.",
        namespace=USER,
        kind="rule",
        agent_id="planner",
        source_kind="user-confirmed",
    )
    steps = [
        (
            planner,
            "planner",
            "I need a trip to Kyoto in April; I only fly window seats.",
        ),
        (booker, "booker", "Book the Kyoto flight: which seat does the client want?"),
        (booker, "booker", "How should I open the negotiation with the client?"),
        (planner, "planner", "How should I open the negotiation with the client?"),
    ]
    replies = []
    for i, (app, name, text) in enumerate(steps):
        config = {"configurable": {"thread_id": f"{name}-{i}", "user_id": USER}}
        reply = str(
            app.invoke({"messages": [HumanMessage(text, name=USER)]}, config)[
                "messages"
            ][-1].content
        )
        memory.flush()
        out(f"[{name}] {text}\n  -> {reply}")
        replies.append(reply)
    return replies


def main() -> None:
    with open_memory() as memory:
        run(memory, chat_model())


if __name__ == "__main__":
    main()
