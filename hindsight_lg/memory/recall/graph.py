"""Graph diffusion: activation spreading from recall's best hits along typed edges.

Memory -> entity -> memory is the two-hop association of the design: "What
about the Lisbon trip?" finds the trip, whose ``mentions`` edge leads to Ana's
node, and from there to "Ana is allergic to shellfish". Each hop is one
``edges()`` query for the frontier; the graph is never loaded whole.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.backends.base import MemoryBackend, visible_to
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.model import ENTITY_PREFIX, EdgeType, MemoryRecord, Status, entity_id

GRAPH_TYPES = tuple(t for t in EdgeType if t is not EdgeType.SUPERSEDES)


def seed_score(c: Candidate) -> float:
    """How well a memory matched on its own (dense, lexical or entity path)."""
    return max(
        c.paths.get("dense", 0.0),
        c.paths.get("lexical", 0.0),
        c.paths.get("entity", 0.0),
    )


class Diffusion:
    """Spreads activation from a recall's best hits; sets their ``graph`` path."""

    def __init__(self, backend: MemoryBackend, policy: Policy) -> None:
        self.backend = backend
        self.policy = policy

    def run(
        self,
        pool: dict[str, Candidate],
        namespace: str,
        agent_id: str | None,
        names: Sequence[str] = (),
    ) -> None:
        """Spread activation from the best hits along edges, one query per hop.

        Seeds are the best memories by their own paths (and, when
        ``policy.coreference_activation`` is set, the entity nodes of the
        names the query's relation words resolved to). Each hop
        passes ``activation * edge weight * graph_decay`` on; out of an
        entity node it is divided by the square root of the node's fan (the
        memories that mention it, as seen in this hop's edges), so a name
        mentioned everywhere, such as a speaker's, spreads thinly while a
        name two memories share links them strongly. A seed reached from
        another seed gets the graph credit too: two hits that share a
        person or thing support each other. Memory -> entity -> memory is
        the two-hop association of the design.
        """
        seeds = sorted(pool.values(), key=seed_score, reverse=True)[
            : self.policy.graph_seeds
        ]
        activation = {c.record.id: seed_score(c) for c in seeds if seed_score(c) > 0}
        if self.policy.coreference_activation > 0:
            for name in names:
                activation[entity_id(name)] = self.policy.coreference_activation
        # Activation is kept per seed it came from, so a seed's own activation
        # never returns to it, and two seeds sharing an entity credit each other.
        frontier = {node: {node: act} for node, act in activation.items()}
        seen = set(activation)
        reached: dict[str, float] = defaultdict(float)
        # What arrived by an association (not mere adjacency in a thread),
        # per seed: the relevance rule lets only this vouch for a memory.
        vouched: dict[str, dict[str, float]] = defaultdict(dict)
        with telemetry.memory_span(
            telemetry.RECALL_GRAPH, kind=telemetry.RETRIEVER, path="graph"
        ) as span:
            span.set_attribute("hindsight.seeds", list(activation))
            for _ in range(self.policy.graph_hops):
                if not frontier:
                    break
                edges = self.backend.edges(namespace, list(frontier), types=GRAPH_TYPES)
                nxt, assoc = self._spread(frontier, edges)
                for node, by_seed in nxt.items():
                    if not node.startswith(ENTITY_PREFIX):
                        reached[node] = max(reached[node], max(by_seed.values()))
                for node, by_seed in assoc.items():
                    got = vouched[node]
                    for seed, act in by_seed.items():
                        got[seed] = max(got.get(seed, 0.0), act)
                # Only newly reached nodes spread on; seeds already have.
                frontier = {n: a for n, a in nxt.items() if n not in seen}
                seen |= set(frontier)
            self._attach(pool, namespace, agent_id, reached, vouched)
            span.set_attribute("hindsight.count", len(reached))

    def _spread(
        self, frontier: dict[str, dict[str, float]], edges: Sequence[Any]
    ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
        """One hop: the activation each node receives, per seed it came from.

        Returned twice: over every edge, and over associations only (every
        edge but a thread's ``precedes``), in one pass over the edges.
        """
        fan: dict[str, int] = defaultdict(int)
        for e in edges:
            fan[e.src] += 1
            fan[e.dst] += 1
        nxt: dict[str, dict[str, float]] = defaultdict(dict)
        assoc: dict[str, dict[str, float]] = defaultdict(dict)
        for e in edges:
            targets = (nxt,) if e.type is EdgeType.PRECEDES else (nxt, assoc)
            for a, b in ((e.src, e.dst), (e.dst, e.src)):
                for seed, act in frontier.get(a, {}).items():
                    if seed == b:
                        continue
                    spread = act * e.weight * self.policy.graph_decay
                    if a.startswith(ENTITY_PREFIX):
                        spread /= math.sqrt(max(1, fan[a] - 1))
                    for got in targets:
                        if spread > got[b].get(seed, 0.0):
                            got[b][seed] = spread
        return nxt, assoc

    def _attach(
        self,
        pool: dict[str, Candidate],
        namespace: str,
        agent_id: str | None,
        reached: dict[str, float],
        vouched: dict[str, dict[str, float]],
    ) -> None:
        missing = [i for i in reached if i not in pool]
        fetched = (
            {r.id: r for r in self.backend.get(namespace, missing)} if missing else {}
        )
        for node, act in reached.items():
            record = pool[node].record if node in pool else fetched.get(node)
            if record is None or not _recallable(record, agent_id, self.policy):
                continue
            c = pool.setdefault(node, Candidate(record))
            c.paths["graph"] = max(c.paths.get("graph", 0.0), min(1.0, act))
            for seed, got in vouched.get(node, {}).items():
                c.links[seed] = max(c.links.get(seed, 0.0), got)


def _recallable(record: MemoryRecord, agent_id: str | None, policy: Policy) -> bool:
    if record.status is not Status.ACTIVE or record.strength < policy.min_strength:
        return False
    return agent_id is None or visible_to(record, agent_id)
