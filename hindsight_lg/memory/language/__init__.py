"""Language: what a turn says, read without a model or with one.

``encode`` splits a turn into events and classifies them (English and Chinese
heuristics), ``relations`` reads who is related to whom, ``timeparse`` reads
time phrases, and ``extract`` is the LLM extractor whose output is validated
into the same drafts.

The names below are public: the model-free readings, for tools that want to
read text the way capture does (the benchmarks' baselines use them).
"""

from __future__ import annotations

from hindsight_lg.memory.language.encode import classify, entities, salience
from hindsight_lg.memory.language.timeparse import TimeWindow, find_window

__all__ = ["TimeWindow", "classify", "entities", "find_window", "salience"]
