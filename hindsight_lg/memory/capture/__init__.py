"""Capture: a turn becomes typed events, deduplicated, linked and stored.

``turns`` says what is captured and where it goes; ``writer`` runs the encode
pipeline over the language heuristics of :mod:`hindsight_lg.memory.language`;
making an acknowledged capture survive a crash is
:mod:`hindsight_lg.memory.durability`'s job.
"""

from __future__ import annotations

from hindsight_lg.memory.capture.turns import Placement, Turn, to_turns
from hindsight_lg.memory.capture.writer import Writer, context_vectors, embed_records

__all__ = [
    "Placement",
    "Turn",
    "Writer",
    "context_vectors",
    "embed_records",
    "to_turns",
]
