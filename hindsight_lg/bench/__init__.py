"""Benchmarks: LoCoMo retrieval quality against raw-turn baselines, scale and latency.

Nothing here is imported by :mod:`hindsight_lg`; the ``hindsight-lg bench``
command and the scripts in ``benchmarks/`` use it. Plots need the ``bench``
extra (matplotlib).
"""

from __future__ import annotations

from hindsight_lg.bench.locomo import (
    CATEGORIES,
    Conversation,
    DialogueTurn,
    Question,
    load_locomo,
    normalise_evidence,
)

__all__ = [
    "CATEGORIES",
    "Conversation",
    "DialogueTurn",
    "Question",
    "load_locomo",
    "normalise_evidence",
]
