"""Capture: a turn becomes typed events, deduplicated, linked and stored.

``turns`` says what is captured and where it goes; ``writer`` runs the encode
pipeline over the language heuristics of :mod:`hindsight_lg.memory.language`;
making an acknowledged capture survive a crash is
:mod:`hindsight_lg.memory.durability`'s job.

The names below load on first use, so what needs only ``turns`` or
``vectors`` (the write path's door, lifecycle's re-embedding) does not load
the writer and the language pipeline behind it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hindsight_lg.memory.capture.ahead import EmbeddingMemo, plan_ahead
    from hindsight_lg.memory.capture.turns import Placement, Turn, to_turns
    from hindsight_lg.memory.capture.vectors import context_vectors, embed_records
    from hindsight_lg.memory.capture.writer import Writer

# name -> the module that holds it, imported when the name is first read.
_HOMES = {
    "EmbeddingMemo": "hindsight_lg.memory.capture.ahead",
    "Placement": "hindsight_lg.memory.capture.turns",
    "Turn": "hindsight_lg.memory.capture.turns",
    "Writer": "hindsight_lg.memory.capture.writer",
    "context_vectors": "hindsight_lg.memory.capture.vectors",
    "embed_records": "hindsight_lg.memory.capture.vectors",
    "plan_ahead": "hindsight_lg.memory.capture.ahead",
    "to_turns": "hindsight_lg.memory.capture.turns",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later reads skip this hook
    return value


__all__ = [
    "EmbeddingMemo",
    "Placement",
    "Turn",
    "Writer",
    "context_vectors",
    "embed_records",
    "plan_ahead",
    "to_turns",
]
