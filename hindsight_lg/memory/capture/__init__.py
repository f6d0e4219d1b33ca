"""Capture: a turn becomes typed events, deduplicated, linked and stored.

``writer`` runs the encode pipeline; ``encode`` holds the heuristics and
``extract`` the LLM extractor; ``worker`` captures behind the turn; ``spool``
and ``durable`` make an acknowledged capture survive a crash.
"""

from __future__ import annotations

from hindsight_lg.memory.capture.durable import SpooledCapture
from hindsight_lg.memory.capture.spool import Spool
from hindsight_lg.memory.capture.worker import CaptureWorker
from hindsight_lg.memory.capture.writer import (
    Extractor,
    Placement,
    Writer,
    context_vectors,
    embed_records,
    entity_id,
    to_turns,
)

__all__ = [
    "CaptureWorker",
    "Extractor",
    "Placement",
    "Spool",
    "SpooledCapture",
    "Writer",
    "context_vectors",
    "embed_records",
    "entity_id",
    "to_turns",
]
