"""Retrieval over raw turns, the baselines memory is measured against.

Each turn is rendered ``"speaker: text"``; dense (cosine with the same
embedder), BM25 (the same tokenizer and formula as the reference backend) and
hybrid (reciprocal rank fusion, k=60) rank the rendered turns, and turns are
taken in rank order while they fit the token budget. Two more follow the
Hindsight design's own comparison: ``recent`` (the latest turns that fit, what
a plain chat history gives a model) and ``stream``, the memory-stream
retriever of generative agents (Park et al., 2023): recency, importance and
relevance, each min-max scaled over the conversation, summed with equal
weights; importance is the engine's salience heuristic, relevance the cosine
of the same embedder, recency ``0.995 ** hours`` before the last turn.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindsight_lg._text import approx_tokens, terms
from hindsight_lg.backends import bm25_scores
from hindsight_lg.bench.locomo import DialogueTurn
from hindsight_lg.embeddings import Embedder
from hindsight_lg.memory.language import classify, entities, find_window, salience

BASELINES = ("dense", "bm25", "hybrid", "recent", "stream")
RRF_K = 60
# The memory stream's hourly recency decay (Park et al., 2023).
STREAM_DECAY = 0.995


def render_turn(turn: DialogueTurn) -> str:
    """A raw turn as the baselines put it in a prompt."""
    return f"{turn.speaker}: {turn.text}"


def line_cost(line: str) -> int:
    """Tokens one prompt line costs, its newline included (ceil(chars/4))."""
    return approx_tokens(line + "\n")


def fill_budget(lines: Sequence[tuple[str, str]], budget: int) -> list[str]:
    """Ids of ``(id, line)`` items taken in order while they fit ``budget`` tokens.

    An item too long for what is left is skipped and later, shorter ones may
    still fit: the same rule the memory's assembly follows.
    """
    left = budget
    taken: list[str] = []
    for item_id, line in lines:
        cost = line_cost(line)
        if cost <= left:
            taken.append(item_id)
            left -= cost
    return taken


def rrf(rankings: Sequence[Sequence[str]], k: int = RRF_K) -> list[str]:
    """Reciprocal rank fusion of several rankings (best first)."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda i: (-scores[i], i))


def min_max(values: np.ndarray) -> np.ndarray:
    """``values`` scaled to [0, 1] (all zeros when they are all equal)."""
    low, high = float(values.min(initial=0.0)), float(values.max(initial=0.0))
    if high - low <= 0:
        return np.zeros_like(values, dtype=np.float64)
    return (values - low) / (high - low)


def stream_priors(turns: Sequence[DialogueTurn]) -> np.ndarray:
    """Recency + importance of each turn, each min-max scaled (the stream's priors)."""
    if not turns:
        return np.zeros(0)
    last = max(t.event_time for t in turns)
    hours = np.array([(last - t.event_time) / 3600.0 for t in turns])
    recency = STREAM_DECAY**hours
    importance = np.array([turn_salience(t.text) for t in turns])
    priors: np.ndarray = min_max(recency) + min_max(importance)
    return priors


def turn_salience(text: str) -> float:
    """The engine's salience heuristic for a whole turn."""
    kind = classify(text)
    ents = entities(text)
    return salience(text, kind, ents, find_window(text, 0.0) is not None)


class RawTurnIndex:
    """The baselines over one conversation's raw turns.

    Example:
        >>> from hindsight_lg.embeddings import HashingEmbedder
        >>> turn = DialogueTurn("D1:1", "Ann", "I adopted a puppy", 0.0, 1)
        >>> index = RawTurnIndex([turn], HashingEmbedder())
        >>> index.rank("bm25", "Who adopted a puppy?")
        ['D1:1']
    """

    def __init__(self, turns: Sequence[DialogueTurn], embedder: Embedder) -> None:
        self.ids = [t.dia_id for t in turns]
        self.lines = {t.dia_id: render_turn(t) for t in turns}
        self.terms = [(t.dia_id, terms(render_turn(t))) for t in turns]
        self.embedder = embedder
        self.matrix = np.asarray(embedder.embed(list(self.lines.values())))
        self.latest = [t.dia_id for t in sorted(turns, key=lambda t: -t.event_time)]
        self.priors = stream_priors(turns)

    def _cosines(self, question: str) -> np.ndarray:
        q = np.asarray(self.embedder.embed([question]))[0]
        return np.asarray(self.matrix @ q)

    def _dense(self, question: str) -> list[str]:
        order = np.argsort(-self._cosines(question), kind="stable")
        return [self.ids[i] for i in order]

    def _stream(self, question: str) -> list[str]:
        total = self.priors + min_max(self._cosines(question))
        order = np.argsort(-total, kind="stable")
        return [self.ids[i] for i in order]

    def _bm25(self, question: str) -> list[str]:
        scores = bm25_scores(terms(question), self.terms)
        return sorted(scores, key=lambda i: (-scores[i], i))

    def rank(self, system: str, question: str) -> list[str]:
        """Turn ids, best first, for ``system`` in :data:`BASELINES`."""
        if system == "dense":
            return self._dense(question)
        if system == "bm25":
            return self._bm25(question)
        if system == "hybrid":
            return rrf([self._dense(question), self._bm25(question)])
        if system == "recent":
            return list(self.latest)
        if system == "stream":
            return self._stream(question)
        raise ValueError(f"unknown baseline {system!r}; one of {BASELINES}")

    def retrieve(self, ranking: Sequence[str], budget: int) -> list[str]:
        """Ids of the turns of ``ranking`` that fit ``budget``."""
        return fill_budget([(i, self.lines[i]) for i in ranking], budget)
