"""One embedder, several threads: a capture worker and a recall embed at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from hindsight_lg.embeddings import FlagEmbeddingEmbedder


def test_threads_sharing_one_embedder_all_get_their_vectors(
    minilm: FlagEmbeddingEmbedder,
) -> None:
    """Concurrent embeds of mixed lengths neither fail nor mix up their vectors.

    The fast tokenizer keeps padding settings as state; two threads
    tokenizing at once with different settings raised "Already borrowed"
    (a background capture beside a recall).
    """
    texts = [
        ["I went to a pottery class yesterday.", "We made bowls " * (i % 7 + 1)]
        for i in range(40)
    ]
    alone = [minilm.embed(t) for t in texts]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(minilm.embed, texts))
    for a, b in zip(alone, together, strict=True):
        assert np.allclose(a, b, atol=1e-5)
