"""The memory engine, framework-free: capture, recall, lifecycle, jobs.

It knows the data model, the backend protocol and the embedders; it knows
nothing of LangGraph or of a concrete backend (see ``docs/architecture.md``).

This module is the engine's public surface: the adapters (nodes, savers, the
store, the panel, the CLI, templates, benchmarks) import the engine from here
and from :mod:`hindsight_lg.memory.language`, never from its rooms. The jobs
(reflection, export and import, forgetting a namespace, re-embedding) load on
first use, so ``import hindsight_lg`` does not pay for them (reflection brings
pydantic).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from hindsight_lg.memory.durability import Spool
from hindsight_lg.memory.engine import HindsightMemory
from hindsight_lg.memory.lifecycle import ClusterParams, Correction, Rollback
from hindsight_lg.memory.lifecycle.significance import PINNED_KEY
from hindsight_lg.memory.lifecycle.strength import strength
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import RecalledMemory, RecallResult
from hindsight_lg.memory.recall.result import HEADER as RECALL_HEADER
from hindsight_lg.memory.requests import DEFAULT_TIMEOUT, DefaultTimeout

if TYPE_CHECKING:
    from hindsight_lg.memory.jobs.erasure import ForgetReport, forget_namespace
    from hindsight_lg.memory.jobs.portability import (
        TransferStats,
        export_namespace,
        import_namespace,
    )
    from hindsight_lg.memory.jobs.reembed import reembed
    from hindsight_lg.memory.jobs.reflect import (
        Reflection,
        areflect,
        reflect,
        reflect_later,
    )

# name -> the module that holds it, imported when the name is first read.
_JOBS = {
    "ForgetReport": "hindsight_lg.memory.jobs.erasure",
    "forget_namespace": "hindsight_lg.memory.jobs.erasure",
    "TransferStats": "hindsight_lg.memory.jobs.portability",
    "export_namespace": "hindsight_lg.memory.jobs.portability",
    "import_namespace": "hindsight_lg.memory.jobs.portability",
    "reembed": "hindsight_lg.memory.jobs.reembed",
    "Reflection": "hindsight_lg.memory.jobs.reflect",
    "areflect": "hindsight_lg.memory.jobs.reflect",
    "reflect": "hindsight_lg.memory.jobs.reflect",
    "reflect_later": "hindsight_lg.memory.jobs.reflect",
}


def __getattr__(name: str) -> Any:
    home = _JOBS.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later reads skip this hook
    return value


__all__ = [
    "ClusterParams",
    "Correction",
    "DEFAULT_TIMEOUT",
    "DefaultTimeout",
    "ForgetReport",
    "HindsightMemory",
    "PINNED_KEY",
    "Policy",
    "RECALL_HEADER",
    "RecallResult",
    "RecalledMemory",
    "Reflection",
    "Rollback",
    "Spool",
    "TransferStats",
    "areflect",
    "export_namespace",
    "forget_namespace",
    "import_namespace",
    "reembed",
    "reflect",
    "reflect_later",
    "strength",
]
