"""How a memory's score is made, in one vocabulary for every place that shows it.

The demo, ``hindsight-lg explain``, the panel's search and the recall span
all show the same breakdown, with the same names:

* **paths**: what each search path gave the memory, each scaled to [0, 1]:
  ``dense``, ``lexical``, ``entity``, ``time``, ``emotion``, ``feedback``,
  ``hop`` (the second hop from the best hits), ``speaker``, ``recency``
  (the recent-memories path) and ``graph``;
* **components** of the design's formula: ``similarity`` (the paths fused),
  ``recency`` (``0.5 ** (age / half_life)``), ``importance`` and ``graph``;
* **factors**: ``gate`` (recency and importance modulate relevance, they
  never create it: ``(0.4 sim + 0.15 graph) / 0.55``), ``confidence``
  (``0.5 + 0.5 * confidence``) and ``wake`` (the cold-wake boost, 1 unless
  woken);
* ``rerank`` (the cross-encoder's relevance, when a reranker ran) and the
  final ``score``.

The final score is::

    score = (0.4 similarity + 0.15 graph + (0.2 recency + 0.25 importance) x gate)
            x confidence x wake
    score = (score + rerank) / 2        # with a reranker

with the weights of ``Policy.score_weights``. :meth:`Breakdown.formula`
writes it out with the memory's numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

COMPONENTS = ("similarity", "recency", "importance", "graph")
FACTORS = ("gate", "confidence", "wake")


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One memory's score, component by component.

    Example:
        >>> b = Breakdown(
        ...     {"similarity": 1.0, "recency": 0.5, "importance": 0.8, "graph": 0.0},
        ...     {"similarity": 0.4, "recency": 0.2, "importance": 0.25, "graph": 0.15},
        ...     {"gate": 0.727, "confidence": 1.0, "wake": 1.0},
        ...     score=0.618,
        ... )
        >>> b.formula()
        '0.618 = (0.40 x similarity 1.000 + 0.15 x graph 0.000 + (0.20 x recency 0.500 + 0.25 x importance 0.800) x gate 0.727) x confidence 1.000 x wake 1.000'
    """

    components: Mapping[str, float]
    weights: Mapping[str, float]
    factors: Mapping[str, float]
    score: float
    rerank: float | None = None
    support: str = ""
    paths: Mapping[str, float] = field(default_factory=dict)

    def formula(self) -> str:
        """The score written out: weights x components, then the factors."""
        c, w, f = self.components, self.weights, self.factors

        def term(name: str) -> str:
            return f"{w.get(name, 0.0):.2f} x {name} {c.get(name, 0.0):.3f}"

        prior = f"({term('recency')} + {term('importance')}) x gate {f['gate']:.3f}"
        body = (
            f"({term('similarity')} + {term('graph')} + {prior}) "
            f"x confidence {f['confidence']:.3f} x wake {f['wake']:.3f}"
        )
        if self.rerank is not None:
            body = f"({body} + rerank {self.rerank:.3f}) / 2"
        return f"{self.score:.3f} = {body}"

    def flat(self) -> dict[str, float]:
        """Paths, components, factors and the score in one name -> value map."""
        out = {**self.paths, **self.components, **self.factors, "score": self.score}
        if self.rerank is not None:
            out["rerank"] = self.rerank
        return out

    def to_json(self) -> dict[str, object]:
        """The breakdown as JSON for the panel and spans."""
        return {
            "score": round(self.score, 4),
            "formula": self.formula(),
            "paths": {k: round(v, 4) for k, v in self.paths.items()},
            "components": {k: round(v, 4) for k, v in self.components.items()},
            "weights": dict(self.weights),
            "factors": {k: round(v, 4) for k, v in self.factors.items()},
            "rerank": None if self.rerank is None else round(self.rerank, 4),
            "support": self.support,
        }


def describe(paths: Mapping[str, float], breakdown: Breakdown | None) -> list[str]:
    """Lines for a terminal: the formula, then each path's score.

    Example:
        >>> describe({"dense": 0.5}, None)
        ['paths: dense 0.500']
    """
    shown = " ".join(f"{k} {v:.3f}" for k, v in sorted(paths.items()))
    lines = [] if breakdown is None else [f"score {breakdown.formula()}"]
    if breakdown is not None and breakdown.support:
        lines.append(f"bears on the query by: {breakdown.support}")
    return [*lines, f"paths: {shown}"]
