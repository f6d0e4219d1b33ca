"""Lifecycle: strength, reinforcement, decay, consolidation, reflection, forgetting.

``ops`` holds :class:`Lifecycle`, the engine's collaborator that does the I/O;
``strength`` and ``consolidate`` hold the maths; ``reflect`` writes lessons
after a run; ``correct`` applies a person's corrections;
``erasure`` deletes for real and verifies it.
"""

from __future__ import annotations

from hindsight_lg.memory.lifecycle.consolidate import ClusterParams
from hindsight_lg.memory.lifecycle.correct import Correction, CorrectionFactors
from hindsight_lg.memory.lifecycle.ops import Lifecycle, Progress

__all__ = ["ClusterParams", "Correction", "CorrectionFactors", "Lifecycle", "Progress"]
