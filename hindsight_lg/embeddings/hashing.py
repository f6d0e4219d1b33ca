"""A deterministic hashing embedder: no model, no download, Chinese included."""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import numpy as np

from hindsight_lg._text import terms
from hindsight_lg.embeddings.base import Vectors, normalize


class HashingEmbedder:
    """Hashes words and character n-grams into a fixed-size signed vector.

    Fast and reproducible, which makes it the embedder of unit tests and the
    last fallback; it knows no synonyms, so use a real model in production.

    Example:
        >>> e = HashingEmbedder(dim=64)
        >>> e.embed(["I like tea", "我喜欢茶"]).shape
        (2, 64)
    """

    def __init__(self, dim: int = 384, ngram: int = 3) -> None:
        if dim < 8:
            raise ValueError("dim must be at least 8")
        self.dim = dim
        self.ngram = ngram
        self.model_id = f"hashing-{dim}-{ngram}"

    def _features(self, text: str) -> list[tuple[str, float]]:
        feats = [(f"w:{t}", 1.0) for t in terms(text)]
        compact = " ".join(text.lower().split())
        n = self.ngram
        feats += [(f"c:{compact[i : i + n]}", 0.3) for i in range(len(compact) - n + 1)]
        return feats

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` as L2-normalised rows."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feat, weight in self._features(text):
                h = zlib.crc32(feat.encode("utf-8"))
                sign = 1.0 if h & 0x80000000 else -1.0
                out[row, h % self.dim] += sign * weight
        return normalize(out)
