"""Storage behind a small protocol: Milvus (Lite file or server URI) and in-memory."""

from __future__ import annotations

from typing import Any

from hindsight_lg.store.base import (
    Capabilities,
    Hit,
    MemoryBackend,
    Where,
    check_namespace,
    visible_to,
)
from hindsight_lg.store.memory import InMemoryBackend


def __getattr__(name: str) -> Any:
    # Lazy: the LangGraph store adapter pulls in langgraph.store on first use.
    if name == "HindsightStore":
        from hindsight_lg.store.langgraph import HindsightStore

        return HindsightStore
    raise AttributeError(name)


__all__ = [
    "Capabilities",
    "HindsightStore",
    "Hit",
    "InMemoryBackend",
    "MemoryBackend",
    "Where",
    "check_namespace",
    "visible_to",
]
