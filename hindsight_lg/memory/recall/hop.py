"""A second hop: search again from what the best hits are about.

A question that joins two facts ("What did Jon do after losing his job?")
names one side; the memory holding the other side is close to the first
hit, not to the question. After the first searches, the dense vectors of
the best directly supported hits are added to the query's and one more
dense search runs from that point (Rocchio's relevance feedback, on
vectors). Its hits enter the pool on the ``hop`` path, weighted below the
direct paths (``policy.probe_weights["hop"]``), so a bridging memory ranks
after the hits that match the question. It is the dense twin of the
``feedback`` path (the best hits' *words*, searched lexically).

Where the vectors come from: the first dense search brings its hits'
vectors (``search_dense(..., vectors=True)`` while ``policy.hop_docs`` >
0), since a read cache keeps its records without them (on a Lite file it
holds the vectors apart, for its own cosine scan; on a Milvus server it
often holds none). So the hop runs the same in memory, on a Lite file and
on every replica of a server, whether or not that replica captured into
the tenant. A lender is therefore one of the dense search's hits (or, in
memory, any hit: its records carry their vectors); with no lender the
hop is skipped.

Cost: no model call and no extra read for the vectors; the first dense
search returns ``4 * dim`` more bytes per hit (a server sends them over
the network), and the hop is one more dense search of
``policy.hop_candidates`` rows after it: an exact scan in process on a
Lite file, one more Milvus round trip on a server. That round trip about
doubles a recall on a server, so against a store whose calls cross a
network (``Capabilities.remote``) the hop runs only with
``policy.hop_over_network``.

Also here: :func:`addressed`, the entity path's rule for names used to
address someone (:mod:`hindsight_lg.memory.language.address`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hindsight_lg.backends.base import Hit
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.graph import seed_score
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.model import TURN_KEY


def lenders(
    pool: dict[str, Candidate], policy: Policy, dense_floor: float
) -> list[Candidate]:
    """The best ``policy.hop_docs`` hits that lend their vectors to the hop.

    A lender matched the query on its own (its cosine clears the
    embedder's ``dense_floor`` or its BM25 ``policy.lexical_score_floor``)
    and scores at least ``policy.feedback_min_share`` of the best hit, so
    the hop never starts from a memory that does not bear on the query.
    """
    if policy.hop_docs <= 0 or not pool:
        return []
    ranked = sorted(pool.values(), key=seed_score, reverse=True)
    best = seed_score(ranked[0])
    out = []
    for c in ranked[: policy.hop_docs]:
        direct = (
            c.paths.get("dense", 0.0) >= dense_floor
            or max(c.raw.get("lexical", 0.0), c.raw.get("entity", 0.0))
            >= policy.lexical_score_floor
        )
        if (
            len(c.record.dense) > 0
            and direct
            and best > 0
            and seed_score(c) >= policy.feedback_min_share * best
        ):
            out.append(c)
    return out


def hop_vector(query: Sequence[float], lent: Sequence[Candidate]) -> list[float]:
    """The unit vector of the query plus its lenders' vectors.

    Example:
        >>> from hindsight_lg.model import MemoryRecord
        >>> c = Candidate(MemoryRecord(namespace="u", content="x", dense=[0.0, 1.0]))
        >>> [round(x, 3) for x in hop_vector([1.0, 0.0], [c])]
        [0.707, 0.707]
    """
    total = [float(x) for x in query]
    for c in lent:
        if len(c.record.dense) != len(total):
            continue  # a vector of another model: lends nothing
        for i, x in enumerate(c.record.dense):
            total[i] += x
    norm = math.sqrt(sum(x * x for x in total)) or 1.0
    return [x / norm for x in total]


def addressed(hits: Sequence[Hit], names: Sequence[str]) -> set[str]:
    """Ids of the hits whose turn names ``names`` only to address them.

    What someone was told ("Glad you've got people to lean on, Melanie.")
    is no entity match for a question about them; what they said
    themselves is found by the speaker path, and a memory they speak in
    is never discounted.
    """
    # The language readers load with the first capture or recall, not with
    # the package (tests/test_cli_startup.py).
    from hindsight_lg.memory.language.address import only_addressed

    folded = {n.casefold() for n in names}
    out: set[str] = set()
    for h in hits:
        record = h.record
        if any(p.casefold() in folded for p in record.participants):
            continue
        turn = record.meta.get(TURN_KEY)
        text = turn if isinstance(turn, str) else record.content
        if only_addressed(text, names):
            out.add(record.id)
    return out
