"""A two-agent travel team on LangGraph's server: a planner and a booker.

``langgraph.json`` beside this file serves both graphs with ``langgraph dev``.
They serve the same user: what the planner captures goes to team scope, which
the booker recalls; the booker's own turns stay private to it. The bridging
saver does not capture here (``HINDSIGHT_SAVER_CAPTURE=0``): the capture nodes
do, each in its agent's scope.
"""

from __future__ import annotations

import gc
from typing import Any

from langgraph.graph import START, MessagesState, StateGraph

from hindsight_lg.deploy import chat_model, memory, on_warm
from hindsight_lg.nodes import add_hindsight

model = chat_model()


def member(name: str, scope: str) -> Any:
    """One team member: its own agent id; captures in ``scope``."""

    def agent(state: MessagesState) -> dict[str, Any]:
        prompt = ("system", f"You are the {name} of a travel team.")
        return {"messages": [model.invoke([prompt, *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    add_hindsight(builder, memory=memory(), agent_id=name, scope=scope)
    return builder.compile()  # the server supplies checkpointer and store


planner = member("planner", scope="team")
booker = member("booker", scope="private")


def _freeze() -> None:
    # Once the model is in, full garbage collections skip what is alive then
    # (about 250 ms each otherwise, longer than a recall's deadline; docs/recall.md).
    gc.collect()
    gc.freeze()


# The model loads behind the server's start (hindsight_lg.deploy): freeze after it.
on_warm(_freeze)
