"""The memory engine, framework-free: model, policy, encode, recall, lifecycle."""

from __future__ import annotations

from hindsight_lg.memory.engine import HindsightMemory
from hindsight_lg.memory.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    Scope,
    SourceKind,
    Status,
    Tier,
)
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import RecalledMemory, RecallResult

__all__ = [
    "AuditEntry",
    "Edge",
    "EdgeType",
    "HindsightMemory",
    "Kind",
    "MemoryRecord",
    "Policy",
    "RecallResult",
    "RecalledMemory",
    "Scope",
    "SourceKind",
    "Status",
    "Tier",
]
