"""Pseudo-relevance feedback: search again with the words of the best hits.

A multi-hop question names one side of what it asks; the memories that answer
it best share words with the other side ("what pet did Maya adopt?" finds
"Maya adopted a puppy named Biscuit", whose "Biscuit" finds "Biscuit chewed
the sofa"). The terms of the top hits (the *lenders*) that the query lacks,
the most frequent first, make a second lexical probe, read from the
namespace cache with no store round trip. Everything here happens within one
recall: nothing a past recall found or used is remembered.

What the probe finds rides on the lenders: the relevance rule
(:mod:`.relevance`) keeps a memory with ``feedback`` of at least
``policy.relevance_link`` even when it shares nothing with the question. So
the probe must not drag in noise, and three guards keep it from doing so:

1. **Only strong hits lend.** A top hit lends its words only when it scores
   at least ``feedback_min_share`` of the best one: a weak third hit's words
   are as likely noise as not.
2. **Lenders get no feedback credit.** The probe is built from them, so it
   would match them best whether or not they answer; it exists to find
   *other* memories.
3. **A borrowed word must mean something.** A memory the probe finds keeps
   its feedback only when its match is more than common words (BM25 of at
   least ``policy.lexical_score_floor``, the bar the relevance rule sets a
   direct lexical match) or it names what a lender names (an entity of the
   lender, read as capture reads them, in its own text; not a speaker's name).
   Before this rule, "redis?" brought "From now on, always answer me in short
   bullet points." for sharing "now" with "Redis is fine for caching now", and
   a question about Munich brought that Redis memory for sharing "moved" with
   "I moved from Berlin to Munich". "Biscuit" still bridges: it is a name.

Scores stay relative to the best match, lenders included, so a memory
sharing one borrowed word scores low. Measured on LoCoMo 5-9 (MiniLM, 500
tokens, one run each): evidence recall 82.6% before the third guard, 82.7%
with it (multi-hop 58.6% and 59.9%), answer coverage 67.5% and 67.3%.
Also requiring each lender to bear on the query directly (as graph
activation must) gave 82.4% and multi-hop 58.0%: it is not done.

Cost: one lexical query, and a term scan of each lender and each hit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence

from hindsight_lg._text import terms
from hindsight_lg.backends.base import Hit
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.graph import seed_score
from hindsight_lg.memory.recall.result import Candidate


def lenders(pool: Sequence[Candidate], policy: Policy) -> list[Candidate]:
    """The best ``policy.feedback_docs`` hits that may lend their words (guard 1)."""
    if policy.feedback_docs <= 0 or not pool:
        return []
    ranked = sorted(pool, key=seed_score, reverse=True)
    best = seed_score(ranked[0])
    if best <= 0:
        return []
    return [
        c
        for c in ranked[: policy.feedback_docs]
        if seed_score(c) >= policy.feedback_min_share * best
    ]


def borrowed(top: Sequence[Candidate], have: Collection[str], most: int) -> list[str]:
    """The lenders' terms the query lacks, weighted by lender score and rank."""
    counts: dict[str, float] = defaultdict(float)
    for rank, c in enumerate(top):
        for t in dict.fromkeys(terms(c.record.content)):
            if t not in have:
                counts[t] += seed_score(c) / (1 + rank)
    # sorted() is stable: equal counts keep the order the words were read in.
    return sorted(counts, key=lambda t: -counts[t])[:most]


def meaningful(
    hits: Sequence[Hit], top: Sequence[Candidate], picked: Sequence[str], floor: float
) -> list[Hit]:
    """The hits whose match is more than common words (guard 3)."""
    names = _names(top) & set(picked)
    return [h for h in hits if h.score >= floor or names & _own_terms(h)]


def _names(top: Sequence[Candidate]) -> set[str]:
    """The terms of the names the lenders say, less their speakers' names.

    Read from the text as capture reads entities, beside those stored: a
    memory written as given (``remember``) has none stored.
    """
    # Imported here: the keyword tables take a noticeable part of a second
    # to compile, and a process that never recalls should not pay for them.
    from hindsight_lg.memory.language.encode import entities

    said = {e for c in top for e in (*c.record.entities, *entities(c.record.content))}
    found = {t for e in said for t in terms(e)}
    speakers = {t for c in top for p in c.record.participants for t in terms(p)}
    return found - speakers


def _own_terms(hit: Hit) -> set[str]:
    # The index also matches a memory by its speakers' names; a name bridges
    # only when the memory itself says it.
    r = hit.record
    return set(terms(" ".join([r.content, *r.entities])))
