"""Recall's I/O: each path's store queries, graph diffusion, reranking."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Sequence
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends.base import Hit, MemoryBackend, Where
from hindsight_lg.embeddings.base import Embedder, Reranker
from hindsight_lg.memory.language.relations import substitute
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.graph import Diffusion, seed_score
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
from hindsight_lg.model import Kind, Status, entity_id

_DAY = 86400.0


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
        ranked = sorted(pool.values(), key=seed_score, reverse=True)
        best = seed_score(ranked[0])
        top = [
            c
            for c in ranked[:docs]
            if best > 0 and seed_score(c) >= self.policy.feedback_min_share * best
        ]
        have = set(probe.terms)
        counts: dict[str, float] = defaultdict(float)
        for rank, c in enumerate(top):
            for t in dict.fromkeys(lexical_terms(c.record.content)):
                if t not in have:
                    counts[t] += seed_score(c) / (1 + rank)
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
        """Graph diffusion from the best hits (see :class:`Diffusion`)."""
        Diffusion(self.backend, self.policy).run(pool, namespace, agent_id, names)

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


def _with(where: Where, **changes: Any) -> Where:
    from dataclasses import replace

    return replace(where, **changes)


__all__ = ["Searcher", "entity_id"]
