"""Checked embedding of memory texts, shared by capture and lifecycle.

Apart from :mod:`.writer` so that lifecycle, which re-embeds a corrected or
restored memory, does not load the encode pipeline to do it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindsight_lg.embeddings.base import Embedder


def embed_records(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Embed texts, checking the model returned finite vectors of its own dimension."""
    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    if vectors.shape != (len(texts), embedder.dim) or not np.isfinite(vectors).all():
        raise ValueError(
            f"embedder {embedder.model_id} returned shape {vectors.shape}, "
            f"expected ({len(texts)}, {embedder.dim}) of finite numbers"
        )
    return [list(map(float, v)) for v in vectors]
