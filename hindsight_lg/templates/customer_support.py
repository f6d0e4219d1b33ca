"""Customer support: ``create_agent`` with tools and ``HindsightMiddleware``.

Run: ``python examples/customer_support.py`` (offline) or with
``HINDSIGHT_CHAT_MODEL=...``. The bot remembers a customer's order and
preferences across tickets; the user id comes from the run's context.
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
        "Hi, my order 4417 hasn't arrived. Please email me, no phone calls.",
    ),
    ("c-17", "t2", "Any news on my order? And how will you contact me?"),
    ("c-99", "t3", "How will you contact me?"),
]


def offline_model() -> FakeToolChatModel:
    """Scripted: calls order_status when asked about an order, else quotes memories."""

    def respond(messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return AIMessage(f"{last.content} {echo_memories(messages).content}")
        if "order" in str(last.content).lower():
            return tool_call("order_status", {"order_id": "4417"})
        return echo_memories(messages)

    return FakeToolChatModel(respond=respond)


def build(memory: HindsightMemory, model: Any) -> Any:
    """The support agent with memory middleware and a thread checkpointer."""
    return create_agent(
        model,
        tools=[order_status],
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
