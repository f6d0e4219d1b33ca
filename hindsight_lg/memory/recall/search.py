"""Recall's I/O: each path's store queries, graph diffusion, reranking."""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg._text import terms as lexical_terms
from hindsight_lg.backends import HoldsCold, LiveCheck, Refresh
from hindsight_lg.backends.base import Hit, MemoryBackend, Where
from hindsight_lg.embeddings.base import Embedder, QueriesOf, Reranker
from hindsight_lg.memory._coalesce import CoalescingEmbedder
from hindsight_lg.memory._pending import Pending
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall import feedback, relevance, wake
from hindsight_lg.memory.recall.assembly import assemble
from hindsight_lg.memory.recall.calibration import spread_of
from hindsight_lg.memory.recall.current import newest_first
from hindsight_lg.memory.recall.early import Early
from hindsight_lg.memory.recall.graph import Diffusion
from hindsight_lg.memory.recall.hop import addressed, hop_vector, lenders
from hindsight_lg.memory.recall.paths import RecallContext, StorePaths
from hindsight_lg.memory.recall.relevance import RelevanceRule, keep_relevant
from hindsight_lg.memory.recall.rerank import rerank
from hindsight_lg.memory.recall.result import (
    Candidate,
    Probe,
    RecallResult,
    best_of,
    mark_speakers,
    resolve_names,
    size_k,
)
from hindsight_lg.memory.recall.scoring import (
    explanation,
    fuse_ranks,
    normalise,
    rank_order,
    recency,
    score,
    similarity_weights,
)
from hindsight_lg.memory.recall.trace import annotate_pool, annotate_recall
from hindsight_lg.memory.recall.wake import WakeRule, wake_cold
from hindsight_lg.memory.requests import RecallRequest
from hindsight_lg.model import Kind, Status, entity_id


class Searcher:
    """Runs one recall: probes -> paths -> fuse -> score -> rerank -> budget."""

    def __init__(
        self,
        backend: MemoryBackend,
        embedder: Embedder,
        policy: Policy,
        reranker: Reranker | None = None,
        pool: Executor | None = None,
    ) -> None:
        self.backend = backend
        self.pool = pool  # runs each recall's dense search beside its other paths
        self.embedder = embedder
        self.queries = CoalescingEmbedder(QueriesOf(embedder))  # batched, as queries
        self.policy = policy
        self.reranker = reranker
        self._rules: tuple[WakeRule, RelevanceRule] | None = None
        self._rules_lock = threading.Lock()
        self.paths = StorePaths(backend, policy)

    def rules(self) -> tuple[WakeRule, RelevanceRule]:
        """The wake and relevance rules, measured on the embedder at first use.

        :meth:`HindsightMemory.recall` asks before its deadline starts, so
        no recall spends its time budget measuring (:mod:`.calibration`).
        """
        with self._rules_lock:
            if self._rules is None:
                spread = spread_of(self.embedder)
                self._rules = (
                    wake.rule_for(spread, self.policy),
                    relevance.rule_for(spread, self.policy),
                )
            return self._rules

    def recall(
        self, request: RecallRequest, early: Early | None = None
    ) -> RecallResult:
        """A full recall (see :meth:`HindsightMemory.recall`).

        ``early`` is told of the dense search once it starts, so a caller's
        deadline can return its hits (:mod:`.early`).
        """
        ctx = RecallContext.of(request, self.policy)
        if isinstance(self.backend, Refresh):  # a server's cache: one check, up front
            self.backend.refresh(ctx.namespace)
        pool, names = self._paths(ctx, early)
        self._diffuse(pool, ctx, names)
        mark_speakers(list(pool.values()), ctx.probe)
        annotate_pool(pool)
        ranked = self._live(self._rank(pool, request), ctx)
        if self.reranker is not None and ranked:
            head = self.policy.rerank_candidates
            ranked = rerank(self.reranker, request.query, ranked, head)
        result = self._fitted(ctx, ranked)
        if not request.explain:
            result.cut = {}
        else:
            result.wake = dict(ctx.woken)
            for memory_id, reason in ctx.woken.items():
                if memory_id not in pool:
                    result.cut.setdefault(memory_id, f"cold, {reason}")
            result.explanation = explanation(pool.values())
        return result

    def first_look(self, ctx: RecallContext, hits: list[Hit]) -> RecallResult:
        """A result from the dense hits alone, for a recall past its deadline.

        Scored, held to the relevance rule and assembled as :meth:`recall`
        does, without the other paths (see :mod:`.early`).
        """
        pool: dict[str, Candidate] = {}
        self._add(pool, "dense", hits)
        mark_speakers(list(pool.values()), ctx.probe)
        result = self._fitted(ctx, self._rank(pool, ctx.request))
        result.cut, result.timed_out = {}, True
        return result

    def _fitted(self, ctx: RecallContext, ranked: list[Candidate]) -> RecallResult:
        """``ranked`` held to the relevance rule and assembled within the budget."""
        request = ctx.request
        unrelated: dict[str, str] = {}
        if self.policy.relevance:
            rule = self.rules()[1]
            kept, unrelated = keep_relevant(rule, request.query, ranked)
            spare = [c for c in ranked if c.record.id in unrelated]
            spread = spread_of(self.embedder)  # measured already, by rules()
            ranked = newest_first(kept, self.policy, spread, spare)
            for c in ranked:
                unrelated.pop(c.record.id, None)  # a later statement joined
        want = None if request.k is None else size_k(request.query, request.k)
        budget, focus, many = request.budget_tokens, ctx.probe.terms, ctx.probe.many
        chosen, used, cut = assemble(
            ranked, budget, want, self.policy, focus, many=many
        )
        cut.update(unrelated)
        return RecallResult(
            query=request.query,
            memories=chosen,
            budget_tokens=request.budget_tokens,
            used_tokens=used,
            cut=cut,
            asked=ctx.probe.asked,
        )

    # -- paths -------------------------------------------------------------

    def _paths(
        self, ctx: RecallContext, early: Early | None = None
    ) -> tuple[dict[str, Candidate], list[str]]:
        pool: dict[str, Candidate] = {}
        probe = ctx.probe
        text = self._dense_text(probe)
        # Cold memories are searched with the question whole too (one model
        # call): waking one is a direct match with it ("Where does Lena live?").
        asked = self._marked(probe.text)
        whole = text != asked and self._holds_cold(ctx.namespace)
        texts = [text, asked] if whole else [text]
        with telemetry.memory_span(
            telemetry.EMBED,
            kind=telemetry.EMBEDDING,
            **telemetry.embedding_attributes(self.embedder.model_id, texts),
        ):
            vectors = self.queries.embed(texts)
        vector = vectors[0]
        # A server answers the dense search over the network while this thread
        # runs the other paths' searches, which a read cache answers in process.
        dense_search = self._beside(self._dense, ctx, vector)
        if early is not None:
            early.started(self, ctx, dense_search)
        named = [
            self._beside(self._dense, ctx, v, ctx.cold, "dense-cold")
            for v in vectors[1:]
        ]
        lexical = self.paths.lexical(ctx, list(probe.terms))
        sleeping = self.paths.lexical(
            ctx, list(probe.terms), path="lexical-cold", where=ctx.cold
        )
        names, more_dense, more_lexical = self._coreference(ctx)
        extra: list[tuple[str, list[Hit], set[str]]] = []
        if probe.entities:
            ent_terms = lexical_terms(" ".join(probe.entities))
            hits = self.paths.lexical(ctx, ent_terms, path="entity")
            # "Thanks, Mel!" was said to Mel: no match for a question about her.
            extra.append(("entity", hits, addressed(hits, probe.entities)))
        if probe.emotion:
            # Feelings recall feelings: "I'm stressed again" finds past stress.
            mood = lexical_terms(probe.emotion)
            extra.append(
                ("emotion", self.paths.lexical(ctx, mood, path="emotion"), set())
            )
        recent = self.paths.recent(ctx)
        timed = self.paths.timed(ctx) if probe.window is not None else []
        found = {
            "dense": best_of(
                dense_search.result(), more_dense, *(n.result() for n in named)
            ),
            "lexical": best_of(lexical, more_lexical, sleeping),
        }
        woken = self._wake(ctx, found)
        for path, hits in found.items():
            awake = [
                h
                for h in hits
                if h.record.status is Status.ACTIVE or h.record.id in woken
            ]
            self._add(pool, path, awake)
        for path, hits, skip in extra:
            self._add(pool, path, hits, skip=skip)
        self._feedback(pool, ctx)
        self._hop(pool, ctx, vector)
        now = ctx.request.now
        for r in recent:
            pool.setdefault(r.id, Candidate(r)).paths["recency"] = recency(r, now)
        for r in timed:
            pool.setdefault(r.id, Candidate(r)).paths["time"] = 1.0
        return pool, names

    def _holds_cold(self, namespace: str) -> bool:
        """False where a read cache knows the tenant holds no cold memory."""
        if not isinstance(self.backend, HoldsCold):
            return True
        return bool(self.backend.holds_cold(namespace))

    def _marked(self, question: str) -> str:
        """``question`` with its question mark, if it was typed without one."""
        if not self.policy.dense_question_mark:
            return question
        from hindsight_lg.memory.language.asking import with_its_mark  # lazily

        return with_its_mark(question)

    def _dense_text(self, probe: Probe) -> str:
        """What the dense path embeds: the question as the user would ask it
        ("the user" in the first person), less the people it names."""
        from hindsight_lg.memory.language import people  # lazily

        text = self._marked(probe.text)
        if self.policy.dense_first_person:
            text = people.as_the_user_says_it(text)
        if not self.policy.dense_without_people or not probe.entities:
            return text
        return people.without_people(text, probe.entities)

    def _beside(
        self, search: Callable[[RecallContext, Any], list[Hit]], *args: Any
    ) -> Pending[list[Hit]]:
        """``search(*args)`` on the search pool, or here when there is none."""
        if self.pool is None:
            return Pending(None, search, args)
        run = contextvars.copy_context().run  # its span stays a child of the recall's
        return Pending(self.pool.submit(run, search, *args), search, args)

    def _coreference(
        self, ctx: RecallContext
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
        probe = ctx.probe
        if not probe.relations:
            return [], [], []
        words = lexical_terms(" ".join(r.rel for r in probe.relations))
        hits = self.paths.lexical(ctx, words, path="coreference")
        names = resolve_names(probe.relations, [h.record for h in hits])
        if not names:
            return [], [], []
        from hindsight_lg.memory.language.relations import substitute

        text = substitute(probe.text, names)
        with telemetry.memory_span(
            telemetry.EMBED,
            kind=telemetry.EMBEDDING,
            **telemetry.embedding_attributes(self.embedder.model_id, [text]),
        ):
            vector = self.queries.embed([text])[0]
        dense = self._dense(ctx, vector)
        lexical = self.paths.lexical(ctx, lexical_terms(text))
        return names, dense, lexical

    def _feedback(self, pool: dict[str, Candidate], ctx: RecallContext) -> None:
        """Pseudo-relevance feedback: search again with the best hits' words.

        A memory found only by a common borrowed word gets nothing: it bears
        on nothing the query asks (see :mod:`.feedback`).
        """
        top = feedback.lenders(list(pool.values()), self.policy)
        picked = feedback.borrowed(
            top, set(ctx.probe.terms), self.policy.feedback_terms
        )
        if not picked:
            return
        hits = self.paths.lexical(ctx, [*ctx.probe.terms, *picked], path="feedback")
        floor = self.policy.lexical_score_floor
        kept = feedback.meaningful(hits, top, picked, floor)
        self._add(pool, "feedback", kept, skip={c.record.id for c in top})

    def _hop(self, pool: dict[str, Candidate], ctx: RecallContext, vector: Any) -> None:
        """One dense search from the query plus its best hits (see :mod:`.hop`).

        Only hits clearing the embedder's dense floor join the ``hop``
        path, and the lenders get no credit from it (it starts from them).
        """
        if not self._hopping():
            return
        floor = self.rules()[1].dense_floor(ctx.probe.text)
        lent = lenders(pool, self.policy, floor)
        if not lent:
            return
        hits = self._dense(
            replace(ctx, limit=self.policy.hop_candidates),
            hop_vector(vector, lent),
            ctx.active,
            path="hop",
        )
        skip = {c.record.id for c in lent}
        for h in hits:
            if h.record.id in skip or h.score < floor:
                continue
            c = pool.setdefault(h.record.id, Candidate(h.record))
            c.paths["hop"] = max(c.paths.get("hop", 0.0), h.score)

    def _hopping(self) -> bool:
        """Whether recall takes the second hop with this store (see Policy)."""
        p = self.policy
        remote = self.backend.capabilities.remote
        return p.hop_docs > 0 and (p.hop_over_network or not remote)

    def _dense(
        self,
        ctx: RecallContext,
        vector: Any,
        where: Where | None = None,
        path: str = "dense",
    ) -> list[Hit]:
        # The first searches bring their hits' vectors for the hop to lend, in
        # the same call: a read cache keeps its records without them (hop.py).
        lend = path != "hop" and self._hopping()
        return self.paths.dense(ctx, vector, where, path, lend=lend)

    def _wake(self, ctx: RecallContext, found: dict[str, list[Hit]]) -> set[str]:
        """The cold memories ``found`` that wake (see :mod:`.wake`)."""
        if not any(h.record.status is Status.COLD for hs in found.values() for h in hs):
            return set()  # no path found a cold memory: nothing to wake
        floor = self.rules()[0].floor(ctx.probe.text)
        return wake_cold(found, floor, self.policy, ctx.woken)

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
            if len(h.record.dense) and not len(c.record.dense):
                c.record.dense = h.record.dense  # a dense hit's vector, for the hop
            c.paths[path] = max(c.paths.get(path, 0.0), scaled.get(h.record.id, 0.0))
            c.raw[path] = max(c.raw.get(path, 0.0), raw[h.record.id])
            if h.record.status is Status.COLD:
                c.woken = True

    def _diffuse(
        self, pool: dict[str, Candidate], ctx: RecallContext, names: Sequence[str]
    ) -> None:
        """Graph diffusion from the best hits (see :class:`Diffusion`)."""
        diffusion = Diffusion(self.backend, self.policy)
        diffusion.run(pool, ctx.namespace, ctx.request.agent_id, names)

    # -- ranking -----------------------------------------------------------

    def _rank(
        self, pool: dict[str, Candidate], request: RecallRequest
    ) -> list[Candidate]:
        ranked = []
        if self.policy.fusion == "rrf":
            fuse_ranks(list(pool.values()), self.policy)
        weights = similarity_weights(self.policy)
        for c in pool.values():
            if (
                c.record.kind is Kind.EXPERIENCE
                and not request.include_experience
                and not c.record.meta.get("verified")
            ):
                continue
            if not c.woken and c.record.status is not Status.ACTIVE:
                continue
            score(c, self.policy, request.now, weights)
            ranked.append(c)
        ranked.sort(key=rank_order)
        return ranked

    def _live(self, ranked: list[Candidate], ctx: RecallContext) -> list[Candidate]:
        """Drop what another process deleted while a read cache still held it.

        Only a cache that can lag (in front of a server) reads anything: one
        lookup by primary key of the ranked ids, so a memory forgotten on
        another replica is never recalled here.
        """
        if not ranked or not isinstance(self.backend, LiveCheck):
            return ranked
        held = set(self.backend.live(ctx.namespace, [c.record.id for c in ranked]))
        return [c for c in ranked if c.record.id in held]

    def annotate(self, span: Any, result: RecallResult) -> None:
        """Recall span attributes: ids, scores, budget; OpenInference documents."""
        annotate_recall(span, result)


__all__ = ["Searcher", "entity_id"]
