"""Recall's I/O: each path's store queries, graph diffusion, reranking."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends.base import Hit, MemoryBackend, Where
from hindsight_lg.embeddings.base import Embedder, Reranker
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
        pool = self._paths(probe, namespace, agent_id, now)
        self._diffuse(pool, namespace, agent_id)
        mark_speakers(list(pool.values()), probe)
        annotate_pool(pool)
        ranked = self._rank(pool, now, include_experience)
        if self.reranker is not None and ranked:
            ranked = self._rerank(query, ranked)
        want = size_k(query, k)
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
    ) -> dict[str, Candidate]:
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
        self._add(pool, "dense", self._dense(namespace, vector, wake, limit))
        self._add(
            pool, "lexical", self._lexical(namespace, list(probe.terms), active, limit)
        )
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
        return pool

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
        """
        docs = self.policy.feedback_docs
        if docs <= 0 or not pool:
            return
        top = sorted(pool.values(), key=_seed_score, reverse=True)[:docs]
        have = set(probe.terms)
        counts: dict[str, float] = defaultdict(float)
        for rank, c in enumerate(top):
            for t in dict.fromkeys(lexical_terms(c.record.content)):
                if t not in have:
                    counts[t] += _seed_score(c) / (1 + rank)
        if not counts:
            return
        picked = sorted(counts, key=lambda t: -counts[t])[: self.policy.feedback_terms]
        self._add(
            pool,
            "feedback",
            self._lexical(
                namespace, [*probe.terms, *picked], where, limit, path="feedback"
            ),
        )

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

    def _add(self, pool: dict[str, Candidate], path: str, hits: list[Hit]) -> None:
        raw = {h.record.id: h.score for h in hits}
        if path == "dense":
            scaled = {k: max(0.0, v) for k, v in raw.items()}
        else:
            scaled = normalise(raw, floor=self.policy.lexical_score_floor)
        for h in hits:
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
        self, pool: dict[str, Candidate], namespace: str, agent_id: str | None
    ) -> None:
        """Spread activation from the best hits along edges, one query per hop."""
        seeds = sorted(pool.values(), key=_seed_score, reverse=True)[
            : self.policy.graph_seeds
        ]
        activation = {c.record.id: _seed_score(c) for c in seeds if _seed_score(c) > 0}
        reached: dict[str, float] = defaultdict(float)
        frontier = dict(activation)
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
                nxt: dict[str, float] = defaultdict(float)
                for e in edges:
                    for a, b in ((e.src, e.dst), (e.dst, e.src)):
                        if a in frontier and b not in activation:
                            nxt[b] = max(
                                nxt[b], frontier[a] * e.weight * self.policy.graph_decay
                            )
                for node, act in nxt.items():
                    activation[node] = act
                    if not node.startswith("entity:"):
                        reached[node] = max(reached[node], act)
                frontier = dict(nxt)
            self._attach(pool, namespace, agent_id, reached)
            span.set_attribute("hindsight.count", len(reached))

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
