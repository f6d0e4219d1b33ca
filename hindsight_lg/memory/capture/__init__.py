"""Capture: a turn becomes typed events, deduplicated, linked and stored.

``writer`` runs the encode pipeline over the language heuristics of
:mod:`hindsight_lg.memory.language`; making an acknowledged capture survive a
crash is :mod:`hindsight_lg.memory.durability`'s job.
"""

from __future__ import annotations

from hindsight_lg.memory.capture.writer import (
    Placement,
    Writer,
    context_vectors,
    embed_records,
    to_turns,
)

__all__ = ["Placement", "Writer", "context_vectors", "embed_records", "to_turns"]
