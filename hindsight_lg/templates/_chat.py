"""Shared by the templates: pick the chat model and open the memory.

Offline by default (a scripted model that quotes the memories it was given);
set ``HINDSIGHT_CHAT_MODEL`` to any ``init_chat_model`` name, for example
``openai:gpt-4o-mini`` or ``ollama:llama3.2``, to talk to a real model.
"""

from __future__ import annotations

import os
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.chat import FakeToolChatModel, echo_memories


def chat_model() -> Any:
    """The model named by ``HINDSIGHT_CHAT_MODEL``, else the offline scripted one."""
    name = os.environ.get("HINDSIGHT_CHAT_MODEL")
    if not name:
        return FakeToolChatModel(respond=echo_memories)
    from langchain.chat_models import init_chat_model

    return init_chat_model(name)


def open_memory(uri: str | None = None) -> HindsightMemory:
    """Memory at ``uri`` (default ``HINDSIGHT_URI`` or ``:memory:``), hashing embedder
    unless ``HINDSIGHT_EMBEDDER`` names another."""
    return HindsightMemory.from_uri(
        uri or os.environ.get("HINDSIGHT_URI", ":memory:"),
        embedder=os.environ.get("HINDSIGHT_EMBEDDER", "hashing"),
    )
