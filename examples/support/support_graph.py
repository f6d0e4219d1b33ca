"""The customer-support agent on LangGraph's server: ``create_agent`` + memory middleware.

``langgraph.json`` beside this file serves it with ``langgraph dev``. The
middleware recalls before the model and captures after the agent, against the
server-wide memory of ``hindsight_lg.deploy``; the customer is the server's
authenticated user or, without auth, ``context={"user_id": ...}`` (or
``configurable.user_id``) sent with the run.
"""

from __future__ import annotations

import gc

from langchain.agents import create_agent

from hindsight_lg.deploy import chat_model, memory, on_warm
from hindsight_lg.nodes.middleware import HindsightMiddleware
from hindsight_lg.templates.customer_support import (
    Customer,
    offline_model,
    order_status,
)

# No checkpointer or store here: the server supplies both (see langgraph.json).
graph = create_agent(
    chat_model(offline=offline_model),
    tools=[order_status],
    system_prompt="You are a concise customer-support agent.",
    middleware=[HindsightMiddleware(memory())],
    context_schema=Customer,
)


def _freeze() -> None:
    # Once the model is in, full garbage collections skip what is alive then
    # (about 250 ms each otherwise, longer than a recall's deadline; docs/recall.md).
    gc.collect()
    gc.freeze()


# The model loads behind the server's start (hindsight_lg.deploy): freeze after it.
on_warm(_freeze)
