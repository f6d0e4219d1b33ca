"""Recall's I/O: each path's store queries, graph diffusion, reranking."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Collection, Sequence
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends.base import Hit, MemoryBackend, Where
from hindsight_lg.embeddings.base import Embedder, Reranker
from hindsight_lg.memory.capture.encode import substitute
from hindsight_lg.memory.capture.writer import entity_id
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.result import (
    Candidate,
    Probe,
    RecallResult,
    assemble,
    build_probe,
    fuse_ranks,
    mark_speakers,
    normalise,
    recency,
    resolve_names,
    score,
    size_k,
)
from hindsight_lg.memory.recall.trace import (
    annotate_pool,
    annotate_recall,
    rerank_inputs,
    rerank_outputs,
)
from hindsight_lg.model import EdgeType, Kind, MemoryRecord, Status

_DAY = 86400.0
_GRAPH_TYPES = tuple(t for t in EdgeType if t is not EdgeType.SUPERSEDES)


class Searcher:
    """Runs one recall: probes -> paths -> fuse -> score -> rerank -> budget."""

    def __init__(
        self,
        backend: MemoryBackend,
        embedder: Embedder,
        policy: Policy,
        reranker: Reranker | None = None,
    ) -> None:
        self.backend = backend
        self.embedder = embedder
        self.policy = policy
        self.reranker = reranker

    def recall(
        self,
        query: str,
        namespace: str,
        budget: int,
        k: int | None,
        explain: bool,
        agent_id: str | None,
        context: Sequence[str],
        include_experience: bool,
        now: float,
    ) -> RecallResult:
        """A full recall (see :meth:`HindsightMemory.recall`)."""
        probe = build_probe(query, now=now, context=context)
        pool, names = self._paths(probe, namespace, agent_id, now)
        self._diffuse(pool, namespace, agent_id, names)
        mark_speakers(list(pool.values()), probe)
        annotate_pool(pool)
        ranked = self._rank(pool, now, include_experience)
        if self.reranker is not None and ranked:
            ranked = self._rerank(query, ranked)
        want = None if k is None else size_k(query, k)
        chosen, used, cut = assemble(ranked, budget, want, self.policy, probe.terms)
        result = RecallResult(
            query=query,
            memories=chosen,
            budget_tokens=budget,
            used_tokens=used,
            cut=cut if explain else {},
        )
        if explain:
            result.explanation = {
                c.record.id: {
                    **c.paths,
                    "similarity": c.similarity,
                    "recency_score": c.recency,
                    "importance": c.record.importance,
                    "score": c.score,
                }
                for c in ranked
            }
        return result

    # -- paths -------------------------------------------------------------

    def _paths(
        self, probe: Probe, namespace: str, agent_id: str | None, now: float
    ) -> tuple[dict[str, Candidate], list[str]]:
        pool: dict[str, Candidate] = {}
        active = Where(
            statuses=("active",), reader=agent_id, min_strength=self.policy.min_strength
        )
        limit = self.policy.candidates_per_path
        with telemetry.memory_span(
            telemetry.EMBED,
            kind=telemetry.EMBEDDING,
            **telemetry.embedding_attributes(self.embedder.model_id, [probe.text]),
        ):
            vector = self.embedder.embed([probe.text])[0]
        wake = Where(statuses=("active", "cold"), reader=agent_id)
        dense = self._dense(namespace, vector, wake, limit)
        lexical = self._lexical(namespace, list(probe.terms), active, limit)
        names, more_dense, more_lexical = self._coreference(
            probe, namespace, (active, wake), limit
        )
        self._add(pool, "dense", best_of(dense, more_dense))
        self._add(pool, "lexical", best_of(lexical, more_lexical))
        if probe.entities:
            ent_terms = lexical_terms(" ".join(probe.entities))
            self._add(
                pool,
                "entity",
                self._lexical(namespace, ent_terms, active, limit, path="entity"),
            )
        if probe.emotion:
            # Feelings recall feelings: "I'm stressed again" finds past stress.
            mood = lexical_terms(probe.emotion)
            self._add(
                pool,
                "emotion",
                self._lexical(namespace, mood, active, limit, path="emotion"),
            )
        self._feedback(pool, namespace, probe, active, limit)
        self._recency(pool, namespace, active, now, limit)
        if probe.window is not None:
            self._time(pool, namespace, active, probe, limit)
        return pool, names

    def _coreference(
        self,
        probe: Probe,
        namespace: str,
        where: tuple[Where, Where],
        limit: int,
    ) -> tuple[list[str], list[Hit], list[Hit]]:
        """Read "my sister" in the query as the name the memories gave her.

        The relation words the query asks about are looked up lexically;
        memories that introduce a name with that word ("My sister Mei ...")
        resolve it. The query with the name in place of the relation
        ("Where does Mei work?") then searches the dense and lexical paths
        again. Returns the names and the extra dense and lexical hits; each
        memory keeps its better raw score of the two readings, so BM25 scores
        stay comparable: the memory matching "Mei" *and* "work" beats the one
        that only says "sister" (or only "Mei").
        """
        if not probe.relations:
            return [], [], []
        active, wake = where
        words = lexical_terms(" ".join(r.rel for r in probe.relations))
        hits = self._lexical(namespace, words, active, limit, path="coreference")
        names = resolve_names(probe.relations, [h.record for h in hits])
        if not names:
            return [], [], []
        text = substitute(probe.text, names)
        with telemetry.memory_span(
            telemetry.EMBED,
            kind=telemetry.EMBEDDING,
            **telemetry.embedding_attributes(self.embedder.model_id, [text]),
        ):
            vector = self.embedder.embed([text])[0]
        dense = self._dense(namespace, vector, wake, limit)
        lexical = self._lexical(namespace, lexical_terms(text), active, limit)
        return names, dense, lexical

    def _feedback(
        self,
        pool: dict[str, Candidate],
        namespace: str,
        probe: Probe,
        where: Where,
        limit: int,
    ) -> None:
        """Pseudo-relevance feedback: search again with the best hits' words.

        A multi-hop question names one side of what it asks; the memories that
        answer it best share words with the other side. The terms of the top
        hits that the query lacks, the most frequent first, make a second
        lexical probe (read from the namespace cache, no store round trip).

        Two guards keep it from dragging in noise. Only hits scoring at least
        ``feedback_min_share`` of the best one lend their words (a weak third
        hit's words are as likely noise as not). And the hits that lent their
        words get no feedback credit themselves: the probe is built from
        them, so it would match them best whether or not they answer; it
        exists to find *other* memories. Scores stay relative to the best
        match, lenders included, so a memory sharing one borrowed word scores
        low.
        """
        docs = self.policy.feedback_docs
        if docs <= 0 or not pool:
            return
        ranked = sorted(pool.values(), key=_seed_score, reverse=True)
        best = _seed_score(ranked[0])
        top = [
            c
            for c in ranked[:docs]
            if best > 0 and _seed_score(c) >= self.policy.feedback_min_share * best
        ]
        have = set(probe.terms)
        counts: dict[str, float] = defaultdict(float)
        for rank, c in enumerate(top):
            for t in dict.fromkeys(lexical_terms(c.record.content)):
                if t not in have:
                    counts[t] += _seed_score(c) / (1 + rank)
        if not counts:
            return
        picked = sorted(counts, key=lambda t: -counts[t])[: self.policy.feedback_terms]
        hits = self._lexical(
            namespace, [*probe.terms, *picked], where, limit, path="feedback"
        )
        lenders = {c.record.id for c in top}
        self._add(pool, "feedback", hits, skip=lenders)

    def _dense(
        self, namespace: str, vector: Any, where: Where, limit: int
    ) -> list[Hit]:
        with telemetry.memory_span(
            telemetry.RECALL_DENSE, kind=telemetry.RETRIEVER, path="dense"
        ) as span:
            hits = self.backend.search_dense(namespace, vector, where, limit=limit)
            keep = [
                h
                for h in hits
                if h.record.status is Status.ACTIVE
                or h.score >= self.policy.cold_wake_similarity
            ]
            span.set_attribute("hindsight.count", len(keep))
            return keep

    def _lexical(
        self,
        namespace: str,
        terms: list[str],
        where: Where,
        limit: int,
        path: str = "lexical",
    ) -> list[Hit]:
        with telemetry.memory_span(
            telemetry.RECALL_LEXICAL, kind=telemetry.RETRIEVER, path=path, terms=terms
        ) as span:
            hits = self.backend.search_lexical(namespace, terms, where, limit=limit)
            span.set_attribute("hindsight.count", len(hits))
            return hits

    def _add(
        self,
        pool: dict[str, Candidate],
        path: str,
        hits: list[Hit],
        skip: Collection[str] = (),
    ) -> None:
        raw = {h.record.id: h.score for h in hits}
        if path == "dense":
            scaled = {k: max(0.0, v) for k, v in raw.items()}
        else:
            scaled = normalise(raw, floor=self.policy.lexical_score_floor)
        for h in hits:
            if h.record.id in skip:
                continue
            c = pool.setdefault(h.record.id, Candidate(h.record))
            c.paths[path] = max(c.paths.get(path, 0.0), scaled.get(h.record.id, 0.0))
            if h.record.status is Status.COLD:
                c.woken = True

    def _recency(
        self,
        pool: dict[str, Candidate],
        namespace: str,
        where: Where,
        now: float,
        limit: int,
    ) -> None:
        since = now - self.policy.recency_window_days * _DAY
        with telemetry.memory_span(
            telemetry.RECALL_RECENCY, kind=telemetry.RETRIEVER, path="recency"
        ) as span:
            rows = self.backend.query(namespace, _with(where, since=since), limit=limit)
            span.set_attribute("hindsight.count", len(rows))
        for r in rows:
            c = pool.setdefault(r.id, Candidate(r))
            c.paths["recency"] = recency(r, now)

    def _time(
        self,
        pool: dict[str, Candidate],
        namespace: str,
        where: Where,
        probe: Probe,
        limit: int,
    ) -> None:
        window = probe.window
        assert window is not None
        with telemetry.memory_span(
            telemetry.RECALL_TIME, kind=telemetry.RETRIEVER, path="time"
        ) as span:
            rows = self.backend.query(
                namespace,
                _with(where, since=window.start, until=window.end),
                limit=limit * 4,
            )
            span.set_attribute("hindsight.window", window.phrase)
            span.set_attribute("hindsight.count", len(rows))
        for r in rows:
            c = pool.setdefault(r.id, Candidate(r))
            c.paths["time"] = 1.0

    def _diffuse(
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
        seeds = sorted(pool.values(), key=_seed_score, reverse=True)[
            : self.policy.graph_seeds
        ]
        activation = {c.record.id: _seed_score(c) for c in seeds if _seed_score(c) > 0}
        if self.policy.coreference_activation > 0:
            for name in names:
                activation[entity_id(name)] = self.policy.coreference_activation
        # Activation is kept per seed it came from, so a seed's own activation
        # never returns to it, and two seeds sharing an entity credit each other.
        frontier = {node: {node: act} for node, act in activation.items()}
        seen = set(activation)
        reached: dict[str, float] = defaultdict(float)
        with telemetry.memory_span(
            telemetry.RECALL_GRAPH, kind=telemetry.RETRIEVER, path="graph"
        ) as span:
            span.set_attribute("hindsight.seeds", list(activation))
            for _ in range(self.policy.graph_hops):
                if not frontier:
                    break
                edges = self.backend.edges(
                    namespace, list(frontier), types=_GRAPH_TYPES
                )
                nxt = self._spread(frontier, edges)
                for node, by_seed in nxt.items():
                    if not node.startswith("entity:"):
                        reached[node] = max(reached[node], max(by_seed.values()))
                # Only newly reached nodes spread on; seeds already have.
                frontier = {n: a for n, a in nxt.items() if n not in seen}
                seen |= set(frontier)
            self._attach(pool, namespace, agent_id, reached)
            span.set_attribute("hindsight.count", len(reached))

    def _spread(
        self, frontier: dict[str, dict[str, float]], edges: Sequence[Any]
    ) -> dict[str, dict[str, float]]:
        """One hop: the activation each node receives, per seed it came from."""
        fan: dict[str, int] = defaultdict(int)
        for e in edges:
            fan[e.src] += 1
            fan[e.dst] += 1
        nxt: dict[str, dict[str, float]] = defaultdict(dict)
        for e in edges:
            for a, b in ((e.src, e.dst), (e.dst, e.src)):
                for seed, act in frontier.get(a, {}).items():
                    if seed == b:
                        continue
                    spread = act * e.weight * self.policy.graph_decay
                    if a.startswith("entity:"):
                        spread /= math.sqrt(max(1, fan[a] - 1))
                    if spread > nxt[b].get(seed, 0.0):
                        nxt[b][seed] = spread
        return nxt

    def _attach(
        self,
        pool: dict[str, Candidate],
        namespace: str,
        agent_id: str | None,
        reached: dict[str, float],
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

    # -- ranking -----------------------------------------------------------

    def _rank(
        self, pool: dict[str, Candidate], now: float, include_experience: bool
    ) -> list[Candidate]:
        ranked = []
        if self.policy.fusion == "rrf":
            fuse_ranks(list(pool.values()), self.policy)
        for c in pool.values():
            if (
                c.record.kind is Kind.EXPERIENCE
                and not include_experience
                and not c.record.meta.get("verified")
            ):
                continue
            if not c.woken and c.record.status is not Status.ACTIVE:
                continue
            score(c, self.policy, now)
            ranked.append(c)
        ranked.sort(key=lambda c: (-c.score, -c.record.event_time, c.record.id))
        return ranked

    def _rerank(self, query: str, ranked: list[Candidate]) -> list[Candidate]:
        head = ranked[: max(20, self.policy.candidates_per_path)]
        assert self.reranker is not None
        with telemetry.memory_span(
            telemetry.RERANK,
            kind=telemetry.RERANKER,
            count=len(head),
            **rerank_inputs(self.reranker.model_id, query, head),
        ) as span:
            scores = self.reranker.score(query, [c.record.content for c in head])
            for c, s in zip(head, scores, strict=True):
                c.paths["rerank"] = float(s)
                c.score = 0.5 * c.score + 0.5 * float(s)
            head.sort(key=lambda c: -c.score)
            telemetry.set_attributes(span, rerank_outputs(head))
        return head + ranked[len(head) :]

    def annotate(self, span: Any, result: RecallResult) -> None:
        """Recall span attributes: ids, scores, budget; OpenInference documents."""
        annotate_recall(span, result)


def best_of(*hit_lists: list[Hit]) -> list[Hit]:
    """One hit per memory across several searches of a path, its best raw score."""
    best: dict[str, Hit] = {}
    for hits in hit_lists:
        for h in hits:
            if h.record.id not in best or h.score > best[h.record.id].score:
                best[h.record.id] = h
    return sorted(best.values(), key=lambda h: -h.score)


def _seed_score(c: Candidate) -> float:
    return max(
        c.paths.get("dense", 0.0),
        c.paths.get("lexical", 0.0),
        c.paths.get("entity", 0.0),
    )


def _recallable(record: MemoryRecord, agent_id: str | None, policy: Policy) -> bool:
    from hindsight_lg.backends.base import visible_to

    if record.status is not Status.ACTIVE or record.strength < policy.min_strength:
        return False
    return agent_id is None or visible_to(record, agent_id)


def _with(where: Where, **changes: Any) -> Where:
    from dataclasses import replace

    return replace(where, **changes)


__all__ = ["Searcher", "entity_id"]
