"""Recall: probes, search paths, fusion, scoring, and the budgeted block.

``search`` runs the paths against the store (:class:`Searcher`); ``result``
holds the pure scoring and assembly; ``trace`` puts them on spans.
"""

from __future__ import annotations

from hindsight_lg.memory.recall.result import RecalledMemory, RecallResult
from hindsight_lg.memory.recall.search import Searcher

__all__ = ["RecallResult", "RecalledMemory", "Searcher"]
