"""Lifecycle: strength, reinforcement, decay, consolidation, correction, deletion.

``ops`` holds :class:`Lifecycle`, the engine's collaborator that does the I/O;
``strength`` and ``consolidate`` hold the maths; ``correct`` applies a
person's corrections; ``rollback`` undoes what a memory, a thread or a time
span wrote; ``forgetting`` deletes for real and takes the forgotten
words back from what was derived from them; ``ids`` reads the short ids
listings print. Reflection and forgetting a whole namespace are jobs
(:mod:`hindsight_lg.memory.jobs`).
"""

from __future__ import annotations

from hindsight_lg.memory.lifecycle.consolidate import ClusterParams
from hindsight_lg.memory.lifecycle.correct import Correction, CorrectionFactors
from hindsight_lg.memory.lifecycle.ops import Lifecycle, Progress
from hindsight_lg.memory.lifecycle.rollback import Rollback, Selection

__all__ = [
    "ClusterParams",
    "Correction",
    "CorrectionFactors",
    "Lifecycle",
    "Progress",
    "Rollback",
    "Selection",
]
