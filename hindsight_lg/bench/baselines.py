"""Retrieval over raw turns, the baselines memory is measured against.

Each turn is rendered ``"speaker: text"``; dense (cosine with the same
embedder), BM25 (the same tokenizer and formula as the reference backend) and
hybrid (reciprocal rank fusion, k=60) rank the rendered turns, and turns are
taken in rank order while they fit the token budget.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hindsight_lg._text import approx_tokens, terms
from hindsight_lg.backends.lexical import bm25_scores
from hindsight_lg.bench.locomo import DialogueTurn
from hindsight_lg.embeddings.base import Embedder

BASELINES = ("dense", "bm25", "hybrid")
RRF_K = 60


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


class RawTurnIndex:
    """The three baselines over one conversation's raw turns.

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

    def _dense(self, question: str) -> list[str]:
        q = np.asarray(self.embedder.embed([question]))[0]
        order = np.argsort(-(self.matrix @ q), kind="stable")
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
        raise ValueError(f"unknown baseline {system!r}; one of {BASELINES}")

    def retrieve(self, ranking: Sequence[str], budget: int) -> list[str]:
        """Ids of the turns of ``ranking`` that fit ``budget``."""
        return fill_budget([(i, self.lines[i]) for i in ranking], budget)
