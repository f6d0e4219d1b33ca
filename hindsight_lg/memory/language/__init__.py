"""Language: what a turn says, read without a model or with one.

``encode`` splits a turn into events and classifies them (English and Chinese
heuristics), ``relations`` reads who is related to whom, ``timeparse`` reads
time phrases, and ``extract`` is the LLM extractor whose output is validated
into the same drafts.

The names below are public: the model-free readings, for tools that want to
read text the way capture does (the benchmarks' baselines use them). They
load on first use: the keyword tables of both languages take a noticeable
part of a second to compile, and a command or server that never captures
(listing, auditing, exporting) should not pay for them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hindsight_lg.memory.language.encode import classify, entities, salience
    from hindsight_lg.memory.language.timeparse import TimeWindow, find_window

# name -> the module that holds it, imported when the name is first read.
_HOMES = {
    "TimeWindow": "hindsight_lg.memory.language.timeparse",
    "classify": "hindsight_lg.memory.language.encode",
    "entities": "hindsight_lg.memory.language.encode",
    "find_window": "hindsight_lg.memory.language.timeparse",
    "salience": "hindsight_lg.memory.language.encode",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later reads skip this hook
    return value


__all__ = ["TimeWindow", "classify", "entities", "find_window", "salience"]
