"""One vector space from an English model and a multilingual one, routed by script.

No packaged model serves both languages well: all-MiniLM-L6-v2 is strong on
English and blind to Chinese (two unrelated Chinese sentences score about
0.6), multilingual-e5-small reads both but is weaker on long English chats
alone. Their sum is stronger in English than either, and e5 alone is the
better reader of Chinese (docs/embeddings.md has the measurements).

:class:`BilingualEmbedder` gives every text one vector of ``english.dim +
multilingual.dim`` dimensions:

* a text without Chinese characters (``has_cjk``) is
  ``[english(t), multilingual(t)] / sqrt(2)``, each half unit-length, so the
  cosine of two such texts is the mean of the two models' cosines;
* a text with them is ``[0, multilingual(t)]``: the English model's reading
  of it is noise, so it is left out, and the cosine of two such texts is the
  multilingual model's alone.

Both halves are unit vectors, so one cosine index (Milvus) serves both kinds
of text and a mixed store needs no second collection. Across scripts (an
English question, a Chinese memory) only the multilingual half meets, scaled
by ``1/sqrt(2)``: recall's floors are calibrated per query script, the rest
is ranking. Queries go through each model's ``embed_queries`` where it has
one (e5's ``"query: "`` prefix).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hindsight_lg._text import has_cjk
from hindsight_lg.embeddings.base import Embedder, Vectors, embed_queries, normalize

HALF = 1.0 / math.sqrt(2.0)


class BilingualEmbedder:
    """Texts embedded by an English model and a multilingual one, by script.

    Args:
        english: the model for text without Chinese characters (MiniLM).
        multilingual: the model for every text (multilingual-e5).

    Example:
        >>> from hindsight_lg.embeddings.hashing import HashingEmbedder
        >>> e = BilingualEmbedder(HashingEmbedder(8), HashingEmbedder(16, 2))
        >>> e.dim, e.model_id
        (24, 'hashing-8-3+hashing-16-2')
        >>> v = e.embed(["I like tea", "我喜欢茶"])
        >>> float(abs(v[1, :8]).sum())  # Chinese: the English half stays empty
        0.0
    """

    def __init__(self, english: Embedder, multilingual: Embedder) -> None:
        self.english = english
        self.multilingual = multilingual
        self.model_id = f"{english.model_id}+{multilingual.model_id}"
        self.dim = english.dim + multilingual.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed stored texts."""
        return self._embed(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries."""
        return self._embed(texts, query=True)

    def _embed(self, texts: Sequence[str], *, query: bool) -> Vectors:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        chinese = [has_cjk(t) for t in texts]
        cjk = [i for i, c in enumerate(chinese) if c]
        latin = [i for i, c in enumerate(chinese) if not c]
        split = self.english.dim
        if latin:
            words = [texts[i] for i in latin]
            out[latin, :split] = HALF * self._part(self.english, words, query)
            out[latin, split:] = HALF * self._part(self.multilingual, words, query)
        if cjk:
            words = [texts[i] for i in cjk]
            out[cjk, split:] = self._part(self.multilingual, words, query)
        return out

    @staticmethod
    def _part(model: Embedder, texts: list[str], query: bool) -> Vectors:
        vectors = embed_queries(model, texts) if query else model.embed(texts)
        return normalize(vectors)
