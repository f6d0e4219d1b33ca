"""Personal assistant: a StateGraph with recall / capture / reflect nodes and HindsightSaver.

Run: ``python examples/personal_assistant.py`` (offline) or with
``HINDSIGHT_CHAT_MODEL=openai:gpt-4o-mini``. Facts told in one thread are
recalled in a new thread for the same user, never for another user.
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

SYSTEM = "You are a helpful personal assistant. Use what you remember about the user."
SCRIPT = [
    ("maya", "monday", "Hi, I'm Maya. I'm vegetarian and allergic to peanuts."),
    ("maya", "monday", "My sister Lena's wedding is in Lisbon on June 14."),
    ("maya", "friday", "Suggest a dinner for tonight: what am I allergic to?"),
    ("maya", "friday", "When is Lena's wedding again?"),
    ("tom", "tuesday", "Any food I should avoid?"),
]


def build(memory: HindsightMemory, model: Any) -> Any:
    """The assistant graph: recall -> agent -> capture -> reflect, with the bridge saver."""

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke([("system", SYSTEM), *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    add_hindsight(builder, agent="agent", memory=memory)
    return builder.compile(checkpointer=HindsightSaver(InMemorySaver(), memory))


def run(
    memory: HindsightMemory, model: Any, out: Callable[[str], None] = print
) -> list[str]:
    """Play the script; returns the assistant's replies."""
    app = build(memory, model)
    replies = []
    for user, thread, text in SCRIPT:
        config = {"configurable": {"thread_id": f"{user}-{thread}", "user_id": user}}
        # Named, so memories say who said it ("maya: ...", not "user: ...").
        said = HumanMessage(text, name=user)
        reply = app.invoke({"messages": [said]}, config)["messages"][-1]
        memory.flush()  # a demo shows the next turn what this one captured
        out(f"[{user}/{thread}] {text}\n  -> {reply.content}")
        replies.append(str(reply.content))
    return replies


def main() -> None:
    with open_memory() as memory:
        run(memory, chat_model())


if __name__ == "__main__":
    main()
