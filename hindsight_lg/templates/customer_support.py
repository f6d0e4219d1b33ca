"""Customer support: ``create_agent`` with tools and ``HindsightMiddleware``.

Run: ``python examples/customer_support.py`` (offline) or with
``HINDSIGHT_CHAT_MODEL=...``. The bot remembers a customer's preferences
across tickets: what a customer asks it to remember it saves with the
``manage_memory`` tool (attributed to the ticket's thread and message), the
rest the middleware captures; the user id comes from the run's context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from hindsight_lg import HindsightMemory
from hindsight_lg.chat import FakeToolChatModel, echo_memories, tool_call
from hindsight_lg.nodes.middleware import HindsightMiddleware
from hindsight_lg.nodes.tools import memory_tools
from hindsight_lg.templates._chat import chat_model, open_memory


@dataclass
class Customer:
    """The run's context: who the ticket is for."""

    user_id: str


@tool
def order_status(order_id: str) -> str:
    """Look up the shipping status of an order."""
    return f"Order {order_id} shipped yesterday; arrives Thursday."


SCRIPT = [
    (
        "c-17",
        "t1",
        "Hi, my order 4417 hasn't arrived. Remember: contact me by email, no calls.",
    ),
    ("c-17", "t2", "Any news on my order? And how will you contact me?"),
    ("c-99", "t3", "How will you contact me?"),
]


_REMEMBER = "remember:"


def _this_turn(messages: list[BaseMessage]) -> tuple[str, list[BaseMessage]]:
    """The customer's last message and what the agent did since (calls, results)."""
    at = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
    return str(messages[at].content), messages[at + 1 :]


def offline_model() -> FakeToolChatModel:
    """Scripted: looks an order up, saves what it is asked to remember, quotes memories.

    Each tool is called once per ticket, and ``manage_memory`` only where the
    agent has it (the server's support graph binds ``order_status`` alone).
    """

    def respond(messages: list[BaseMessage]) -> AIMessage:
        asked, turn = _this_turn(messages)
        called = {
            c["name"] for m in turn if isinstance(m, AIMessage) for c in m.tool_calls
        }
        _, cue, note = asked.lower().partition(_REMEMBER)
        if "order" in asked.lower() and "order_status" not in called:
            return tool_call("order_status", {"order_id": "4417"})
        # ``model`` is bound below, before any call: it knows the bound tools.
        if cue and "manage_memory" in set(model.bound_tools) - called:
            note = asked[len(asked) - len(note) :].strip()
            return tool_call("manage_memory", {"action": "create", "content": note})
        status = [
            str(m.content)
            for m in turn
            if isinstance(m, ToolMessage) and m.name == "order_status"
        ]
        return AIMessage(" ".join([*status, str(echo_memories(messages).content)]))

    model = FakeToolChatModel(respond=respond)
    return model


def build(memory: HindsightMemory, model: Any) -> Any:
    """The support agent with memory middleware and a thread checkpointer."""
    return create_agent(
        model,
        tools=[order_status, *memory_tools(memory)],
        system_prompt="You are a concise customer-support agent.",
        middleware=[HindsightMiddleware(memory)],
        context_schema=Customer,
        checkpointer=InMemorySaver(),
    )


def run(
    memory: HindsightMemory, model: Any, out: Callable[[str], None] = print
) -> list[str]:
    """Play the tickets; returns the agent's final replies."""
    agent = build(memory, model)
    replies = []
    for user, thread, text in SCRIPT:
        result = agent.invoke(
            {"messages": [HumanMessage(text, name=user)]},  # who said it
            {"configurable": {"thread_id": thread}},
            context=Customer(user_id=user),
        )
        memory.flush()
        reply = str(result["messages"][-1].content)
        out(f"[{user}/{thread}] {text}\n  -> {reply}")
        replies.append(reply)
    return replies


def main() -> None:
    import os

    with open_memory() as memory:
        real = os.environ.get("HINDSIGHT_CHAT_MODEL")
        run(memory, chat_model() if real else offline_model())


if __name__ == "__main__":
    main()
