"""Embedding ahead: the captures waiting in the worker's queue share one model call.

A model call costs far more per call than per text (MiniLM on one CPU core:
a one-sentence call costs several sentences of a batched one), and the
background worker writes one capture at a time, each with its own call.
When captures wait behind the one it is about to write, the worker hands
them all to :func:`plan_ahead`, which works out the texts each will embed (its
kept events, its turn and the question it answers, as
:meth:`~.writer.Writer.capture_turns` does) and embeds them in one call into
the writer's :class:`EmbeddingMemo`. Each capture then finds its vectors
there and calls the model only for what the plan missed. A vector is a
function of its text alone, so a hit is what the model gives that text
(up to the float rounding of another batch).

Cost: a planned capture is encoded twice (plan, then write), which is noise
beside a real model's call and a loss beside the hashing embedder's, so the
memo plans only while the model costs more per text than
:data:`MIN_TEXT_S`. What it holds is bounded (:data:`MAX_TEXTS`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hindsight_lg.embeddings.base import Embedder, Vectors
from hindsight_lg.memory.capture.turns import Placement, Turn, capped, kept_turns

if TYPE_CHECKING:
    from hindsight_lg.memory.capture.writer import Writer

#: Seconds per text below which embedding ahead costs more than it saves
#: (encoding a sentence twice costs about this much).
MIN_TEXT_S = 0.0005
#: Texts the memo holds at most; planned texts not used by then are dropped.
MAX_TEXTS = 8192
_SMOOTHING = 0.2  # weight of the newest call in the running cost per text

#: One capture to plan: its turns, where they go, when they were said.
Planned = tuple[Sequence[Turn], Placement, float]


class EmbeddingMemo:
    """The writer's embedder: serves texts embedded ahead, embeds the rest.

    Args:
        inner: the model.

    Example:
        >>> from hindsight_lg.embeddings import HashingEmbedder
        >>> memo = EmbeddingMemo(HashingEmbedder(dim=8))
        >>> memo.ahead(["I like tea", "I live in Oslo"])
        >>> memo.embed(["I like tea"]).shape, memo.held
        ((1, 8), 1)
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.model_id = inner.model_id
        self.text_s = 0.0  # running cost of the model per text
        self._held: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        """Texts embedded ahead and not used yet."""
        return len(self._held)

    @property
    def worth_planning(self) -> bool:
        """Whether the model costs enough per text to embed captures ahead."""
        return self.text_s >= MIN_TEXT_S

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors of ``texts``: held ones taken, the others from the model."""
        with self._lock:
            found = {t: self._held.pop(t) for t in set(texts) if t in self._held}
        missing = [t for t in dict.fromkeys(texts) if t not in found]
        if missing:
            found.update(zip(missing, self._model(missing), strict=True))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([found[t] for t in texts])

    def ahead(self, texts: Sequence[str]) -> None:
        """Embed ``texts`` (those not held already) in one call, and hold them."""
        with self._lock:
            todo = [t for t in dict.fromkeys(texts) if t not in self._held]
        if not todo:
            return
        vectors = self._model(todo)
        with self._lock:
            if len(self._held) + len(todo) > MAX_TEXTS:
                self._held.clear()  # what earlier plans left unused
            self._held.update(zip(todo, vectors, strict=True))

    def _model(self, texts: list[str]) -> np.ndarray:
        start = time.perf_counter()
        vectors = np.asarray(self.inner.embed(texts), dtype=np.float32)
        per_text = (time.perf_counter() - start) / len(texts)
        self.text_s += _SMOOTHING * (per_text - self.text_s)
        return vectors


def plan_ahead(writer: Writer, captures: Sequence[Planned]) -> None:
    """Embed, in one call, what ``captures`` will embed when they are written.

    The captures are read in the order they will be written, each thread's
    previous turn carried from one to the next as the writer does. Nothing
    of the writer changes but its memo.
    """
    memo = writer.embedder
    if not isinstance(memo, EmbeddingMemo) or not memo.worth_planning:
        return
    limit = writer.policy.max_content_chars
    previous: dict[tuple[str, str, str, str], Turn | None] = {}
    texts: list[str] = []
    for turns, where, when in captures:
        key = (where.namespace, where.thread_id, where.agent_id, where.scope.value)
        before = previous.get(key, writer.last_turn(key))
        capped_turns = [capped(turn, limit) for turn in turns]
        kept = kept_turns(capped_turns, before)
        asked, last = writer.answered(capped_turns, before if where.thread_id else None)
        for turn, ok, question in zip(capped_turns, kept, asked, strict=True):
            if ok:
                texts += writer.texts_of(turn, when, question)
        if where.thread_id:
            previous[key] = last
    memo.ahead(texts)
