"""Whether a memory bears on a query at all, by a rule calibrated to the embedder.

Ranking orders memories; it does not say that the best of them answers
anything. A question nothing in memory answers ("what is the boiling point
of water?") still has a best memory, and filling the budget with it puts
unrelated lines in front of the model on every turn. So before assembly,
each candidate must show *direct support*, on any one of:

* **dense**: its cosine to the query clears the embedder's floor for the
  query's script (below);
* **lexical**: its BM25 score, on the lexical or the entity path, reaches
  ``policy.lexical_score_floor`` (3.0, "more than common words": one rare
  word in a large namespace, two or more words in a small one), or it
  holds at least half of the query's words (single Chinese characters do
  not count as words: a score made of "的", "是", "一" is common words);
* **time**: the query names a time window and the memory falls in it.

A memory without direct support may still ride on one that has it: graph
diffusion or pseudo-relevance feedback from supported memories gives it
``graph`` or ``feedback`` at least ``policy.relevance_link`` (multi-hop
answers share no words with the question). The second hop (:mod:`.hop`)
vouches for nothing: it only raises memories with support of their own
(a memory-to-memory cosine runs higher than a question's, so on a few
memories its floor would let unrelated ones in). Memories of questions asked before
(kind ``query``) come after every statement kept. When no candidate has direct
support the recall returns nothing, and :meth:`RecallResult.to_prompt` is
empty: no block is injected. Cut memories are listed as ``"unrelated"`` in
``result.cut``, and ``explain`` shows each memory's support.

**Calibration.** The dense floor of a script is the embedder's unrelated
similarity (:mod:`.calibration`) at ``policy.relevance_false_rate`` (1%:
about one unrelated memory in a hundred clears it on similarity alone). A
number in ``policy.relevance_similarity`` replaces both floors;
``policy.relevance = False`` turns the rule off.
"""

from __future__ import annotations

from dataclasses import dataclass

from hindsight_lg._text import has_cjk, terms
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.calibration import Spread, floor_key, script_of
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.model import CONTEXT_KEY, ENTITY_PREFIX, Kind

DIRECT = ("dense", "lexical", "entity", "time")
# A memory holding this share of the query's words bears on it lexically,
# whatever BM25 makes of a small namespace.
HALF = 0.5
LINKED = ("graph", "feedback")


@dataclass(frozen=True, slots=True)
class RelevanceRule:
    """The floors a memory's paths must clear to bear on a query.

    Example:
        >>> rule = RelevanceRule("m", {"latin": 0.3, "cjk": 0.8}, 3.0, 0.2)
        >>> rule.dense_floor("Where does Lena live?"), rule.dense_floor("我住在哪里？")
        (0.3, 0.8)
    """

    model_id: str
    floors: dict[str, float]
    lexical_floor: float
    link: float
    unrelated: dict[str, tuple[float, float]] | None = None

    def dense_floor(self, query: str, memory: str | None = None) -> float:
        """The cosine floor for ``query``'s script (against ``memory``'s, if given).

        A pair of scripts that was not measured (a fixed floor) takes the
        query's floor.
        """
        key = floor_key(query, memory)
        return self.floors[key] if key in self.floors else self.floors[script_of(query)]

    def support(self, query: str, strong: set[str], c: Candidate) -> str:
        """The path by which ``c`` bears on ``query`` directly, or ``""``.

        ``strong`` are the query's terms that can carry a lexical match
        alone (:func:`strong_terms`): a BM25 score made of single Chinese
        characters ("的", "是", "一") is common words, however rare each
        is in a small namespace. The names of the memory's speakers do not
        count: "Where does Maya work?" shares "maya" with everything Maya
        said, and only "work" says what the question is about.
        """
        if c.paths.get("dense", 0.0) >= self.dense_floor(query, c.record.content):
            return "dense"
        if any(c.raw.get(p, 0.0) for p in ("lexical", "entity")):
            strong = strong - set(terms(" ".join(c.record.participants)))
            shared = _shared(strong, c)
            bm25 = max(c.raw.get(p, 0.0) for p in ("lexical", "entity"))
            if shared and bm25 >= self.lexical_floor:
                return "lexical"
            if strong and len(shared) >= HALF * len(strong):
                return "lexical"
        return "time" if c.paths.get("time", 0.0) > 0 else ""

    def linked(self, c: Candidate, supported: set[str]) -> str:
        """The path linking ``c`` to memories that bear on the query, or ``""``.

        Graph activation counts only as it came by an association (a shared
        entity, a cause, a supplement: not mere adjacency in a thread) from
        ``supported`` memories or from an entity the query names (an entity
        seed). A memory said just after the answer, on another subject, is
        not vouched for by it.
        """
        graph = max(
            (
                act
                for seed, act in c.links.items()
                if seed in supported or seed.startswith(ENTITY_PREFIX)
            ),
            default=0.0,
        )
        if graph >= self.link:
            return "graph"
        return "feedback" if c.paths.get("feedback", 0.0) >= self.link else ""


def rule_for(spread: Spread, policy: Policy) -> RelevanceRule:
    """The rule under ``policy`` for the embedder ``spread`` was measured on.

    A number in ``policy.relevance_similarity`` is the floor of every script.
    """
    fixed = policy.relevance_similarity
    if fixed is not None:
        floors, unrelated = {"latin": fixed, "cjk": fixed}, None
    else:
        floors = spread.floors(policy.relevance_false_rate)
        unrelated = spread.asked
    return RelevanceRule(
        spread.model_id,
        floors,
        policy.lexical_score_floor,
        policy.relevance_link,
        unrelated,
    )


def keep_relevant(
    rule: RelevanceRule, query: str, ranked: list[Candidate]
) -> tuple[list[Candidate], dict[str, str]]:
    """The candidates that bear on ``query``, and the others cut as ``"unrelated"``.

    Sets each candidate's ``support`` (the direct path, or ``"via graph"`` /
    ``"via feedback"``). Nothing is kept when no candidate bears on the
    query directly.
    """
    strong = strong_terms(query)
    for c in ranked:
        c.support = rule.support(query, strong, c)
    if not any(c.support for c in ranked):
        return [], {c.record.id: "unrelated" for c in ranked}
    supported = {c.record.id for c in ranked if c.support}
    kept: list[Candidate] = []
    cut: dict[str, str] = {}
    for c in ranked:
        if not c.support and (link := rule.linked(c, supported)):
            c.support = f"via {link}"
        if c.support:
            kept.append(c)
        else:
            cut[c.record.id] = "unrelated"
    # A question asked before is context, not an answer: it follows every
    # statement, however close its words are to the question asked now.
    kept.sort(key=lambda c: c.record.kind is Kind.QUERY)
    return kept, cut


def strong_terms(text: str) -> set[str]:
    """Terms that can carry a lexical match alone: words, and Chinese bigrams.

    Example:
        >>> sorted(strong_terms("我的猫叫什么？"))
        ['什么', '叫什', '我的', '猫叫', '的猫']
    """
    return {t for t in terms(text) if len(t) > 1 or not has_cjk(t)}


def _shared(strong: set[str], c: Candidate) -> set[str]:
    r = c.record
    context = r.meta.get(CONTEXT_KEY, "")
    text = " ".join([r.content, *r.entities, str(context or "")])
    return strong.intersection(terms(text))
