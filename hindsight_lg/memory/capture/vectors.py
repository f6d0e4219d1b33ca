"""Checked embedding of memory texts, shared by capture and lifecycle.

Apart from :mod:`.writer` so that lifecycle, which re-embeds a corrected or
restored memory, does not load the encode pipeline to do it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindsight_lg.embeddings.base import Embedder
from hindsight_lg.model import CONTEXT_KEY, MemoryRecord


def embed_records(embedder: Embedder, texts: Sequence[str]) -> list[list[float]]:
    """Embed texts, checking the model returned finite vectors of its own dimension."""
    vectors = np.asarray(embedder.embed(list(texts)), dtype=np.float32)
    if vectors.shape != (len(texts), embedder.dim) or not np.isfinite(vectors).all():
        raise ValueError(
            f"embedder {embedder.model_id} returned shape {vectors.shape}, "
            f"expected ({len(texts)}, {embedder.dim}) of finite numbers"
        )
    return [list(map(float, v)) for v in vectors]


def context_vectors(
    embedder: Embedder, records: Sequence[MemoryRecord], weight: float
) -> list[list[float]]:
    """Vectors for stored records, each blended with its turn as capture does.

    The turn is rebuilt from the record's content and its ``meta["context"]``
    (the rest of the turn and, for an answer, its question) and embedded as
    one text: close to capture's separately weighted blends, not the same.
    Used by ``reembed``.
    """
    texts = [r.content for r in records]
    turns = {
        i: "".join(f"{p}: " for p in r.participants[:1])
        + f"{r.content} {r.meta[CONTEXT_KEY]}"
        for i, r in enumerate(records)
        if weight > 0 and isinstance(r.meta.get(CONTEXT_KEY), str)
    }
    vectors = np.asarray(
        embed_records(embedder, texts + list(turns.values())), dtype=np.float32
    )
    for j, i in enumerate(turns):
        blended = vectors[i] + weight * vectors[len(texts) + j]
        vectors[i] = blended / np.linalg.norm(blended)
    return [list(map(float, v)) for v in vectors[: len(texts)]]
