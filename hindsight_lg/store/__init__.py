"""Storage behind a small protocol: Milvus (Lite file or server URI) and in-memory."""

from __future__ import annotations

from hindsight_lg.store.base import (
    Capabilities,
    Hit,
    MemoryBackend,
    Where,
    check_namespace,
    visible_to,
)
from hindsight_lg.store.memory import InMemoryBackend

__all__ = [
    "Capabilities",
    "Hit",
    "InMemoryBackend",
    "MemoryBackend",
    "Where",
    "check_namespace",
    "visible_to",
]
