"""The personal assistant on LangGraph's server: recall -> agent -> capture -> reflect.

``langgraph.json`` beside this file serves it with ``langgraph dev``; the
server's store and checkpointer are hindsight-lg's (``hindsight_lg.deploy``),
so what a user tells one thread is recalled in their next thread, and listed
by ``client.store.search_items(("memories", user_id))``. Whose memory a run uses comes
from the server's authenticated user (see ``auth.py``) or, without auth, from
``configurable.user_id``.
"""

from __future__ import annotations

import gc
from typing import Any

from langgraph.graph import START, MessagesState, StateGraph

from hindsight_lg.deploy import chat_model, memory, on_warm
from hindsight_lg.nodes import add_hindsight
from hindsight_lg.templates.personal_assistant import SYSTEM

model = chat_model()


def agent(state: MessagesState) -> dict[str, Any]:
    """Answer with the recalled memories in the conversation."""
    return {"messages": [model.invoke([("system", SYSTEM), *state["messages"]])]}


builder = StateGraph(MessagesState)
builder.add_node("agent", agent)
builder.add_edge(START, "agent")
# No checkpointer or store here: the server supplies both (see langgraph.json).
graph = add_hindsight(builder, agent="agent", memory=memory()).compile()


def _freeze() -> None:
    # Once the model is in, full garbage collections skip what is alive then
    # (about 250 ms each otherwise, longer than a recall's deadline; docs/recall.md).
    gc.collect()
    gc.freeze()


# The model loads behind the server's start (hindsight_lg.deploy): freeze after it.
on_warm(_freeze)
