"""The memory engine, framework-free: capture, recall, lifecycle, transfer.

It knows the data model, the backend protocol and the embedders; it knows
nothing of LangGraph or of a concrete backend (see ``docs/architecture.md``).
"""

from __future__ import annotations

from hindsight_lg.memory.engine import DEFAULT_TIMEOUT, DefaultTimeout, HindsightMemory
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import RecalledMemory, RecallResult

__all__ = [
    "DEFAULT_TIMEOUT",
    "DefaultTimeout",
    "HindsightMemory",
    "Policy",
    "RecallResult",
    "RecalledMemory",
]
