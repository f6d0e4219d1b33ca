"""The hybrid baselines of the long-chat bench, grown session by session.

Both rank with the same hybrid as LoCoMo's ``hybrid`` baseline (dense cosine
of the run's embedder and BM25, fused by reciprocal rank) and fill the budget
in rank order, skipping a line too long for what is left
(:func:`~hindsight_lg.bench.baselines.fill_budget`). ``turns`` ranks whole
turns; ``chunks`` ranks pieces of turns: sentences packed in order up to
:data:`CHUNK_CHARS` characters. On chats with long assistant replies the two
fail differently: one 2,000-character reply fills a 500-token budget, while
chunks show a few sentences of many turns. Each chunk counts as its turn for
evidence recall.

The index only ever holds what it was given, and the protocol gives it a
session after that session's questions were asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindsight_lg._text import terms
from hindsight_lg.backends import bm25_scores
from hindsight_lg.bench.baselines import fill_budget, render_turn, rrf
from hindsight_lg.bench.locomo import DialogueTurn
from hindsight_lg.embeddings import Embedder, embed_queries

CHUNK_CHARS = 600
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Item:
    """One line a baseline may show: its id, the turn it counts as, its text."""

    item_id: str
    turn_id: str
    line: str


def chunk_text(text: str, limit: int = CHUNK_CHARS) -> list[str]:
    """``text`` as sentences (and lines) packed in order into pieces of ``limit`` chars.

    A sentence longer than ``limit`` is cut at spaces (or hard, without any).

    Example:
        >>> chunk_text("One. Two.\\nThree is long.", limit=10)
        ['One. Two.', 'Three is', 'long.']
    """
    pieces = [p for s in _SENTENCE.split(text) for p in _cut(s.strip(), limit) if p]
    out: list[str] = []
    for piece in pieces:
        if out and len(out[-1]) + 1 + len(piece) <= limit:
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def _cut(sentence: str, limit: int) -> list[str]:
    parts: list[str] = []
    while len(sentence) > limit:
        at = sentence.rfind(" ", 0, limit + 1)
        at = at if at > 0 else limit
        parts.append(sentence[:at].strip())
        sentence = sentence[at:].strip()
    return [*parts, sentence]


def turn_items(turns: Sequence[DialogueTurn]) -> list[Item]:
    """Whole turns, rendered ``speaker: text`` as every baseline shows them."""
    return [Item(t.dia_id, t.dia_id, render_turn(t)) for t in turns if t.text]


def chunk_items(turns: Sequence[DialogueTurn]) -> list[Item]:
    """The chunks of ``turns``, each rendered ``speaker: chunk``."""
    return [
        Item(f"{t.dia_id}#{n}", t.dia_id, f"{t.speaker}: {chunk}")
        for t in turns
        for n, chunk in enumerate(chunk_text(t.text))
    ]


class GrowingIndex:
    """Hybrid retrieval over items added in batches (one session at a time).

    Example:
        >>> from hindsight_lg.embeddings import HashingEmbedder
        >>> index = GrowingIndex(HashingEmbedder())
        >>> index.add([Item("a:0", "a:0", "User: I adopted a puppy")])
        >>> [i.turn_id for i in index.retrieve("Who adopted a puppy?", 50)]
        ['a:0']
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.items: list[Item] = []
        self._terms: list[tuple[str, list[str]]] = []
        self._batches: list[np.ndarray] = []
        self._matrix: np.ndarray | None = None

    def add(self, items: Sequence[Item]) -> None:
        """Index ``items`` (embedded in one call)."""
        if not items:
            return
        self.items += items
        self._terms += [(it.item_id, terms(it.line)) for it in items]
        vectors = self.embedder.embed([it.line for it in items])
        self._batches.append(np.asarray(vectors, dtype=np.float32))
        self._matrix = None

    def rank(self, question: str) -> list[str]:
        """Item ids, best first: reciprocal rank fusion of dense and BM25."""
        if not self.items:
            return []
        if self._matrix is None:
            self._matrix = np.vstack(self._batches)
        query = np.asarray(embed_queries(self.embedder, [question]))[0]
        order = np.argsort(-(self._matrix @ query), kind="stable")
        dense = [self.items[i].item_id for i in order]
        scores = bm25_scores(terms(question), self._terms)
        lexical = sorted(scores, key=lambda i: (-scores[i], i))
        return rrf([dense, lexical])

    def retrieve(self, question: str, budget: int) -> list[Item]:
        """The items, in rank order, that fit ``budget`` tokens."""
        by_id = {it.item_id: it for it in self.items}
        ranking = self.rank(question)
        chosen = fill_budget([(i, by_id[i].line) for i in ranking], budget)
        return [by_id[i] for i in chosen]
