"""Recall's store paths: what one recall shares, and each path's store query.

:class:`RecallContext` is what every path of one recall reads (the request,
its probe, its filters); :class:`StorePaths` runs the store queries of the
dense, lexical, recency and time paths, each in its own span. The searcher
(:mod:`.search`) decides which run and what their hits become.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.backends.base import Hit, MemoryBackend, Where, asked_vectors
from hindsight_lg.memory.policy import Policy
from hindsight_lg.memory.recall.result import Probe, build_probe
from hindsight_lg.memory.requests import RecallRequest
from hindsight_lg.model import MemoryRecord

_DAY = 86400.0


@dataclass(frozen=True, slots=True)
class RecallContext:
    """What every path of one recall shares: the request, its probe, its filters.

    Attributes:
        request: the checked recall.
        probe: what the query (and its context) asks about.
        active: active memories the reader may see, strong enough to recall.
        wake: active and cold ones: a direct hit wakes a cold memory.
        cold: cold ones only (the lexical path's second search).
        limit: candidates each path returns at most.
        woken: for each cold memory a path found, whether it woke and why.
    """

    request: RecallRequest
    probe: Probe
    active: Where
    wake: Where
    cold: Where
    limit: int
    woken: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, request: RecallRequest, policy: Policy) -> RecallContext:
        """The context of ``request`` under ``policy``."""
        reader = request.agent_id
        return cls(
            request=request,
            probe=build_probe(request.query, now=request.now, context=request.context),
            active=Where(
                statuses=("active",), reader=reader, min_strength=policy.min_strength
            ),
            wake=Where(statuses=("active", "cold"), reader=reader),
            cold=Where(statuses=("cold",), reader=reader),
            limit=policy.candidates_per_path,
        )

    @property
    def namespace(self) -> str:
        """The tenant searched."""
        return self.request.namespace


class StorePaths:
    """The store queries of recall's paths, over one backend."""

    def __init__(self, backend: MemoryBackend, policy: Policy) -> None:
        self.backend = backend
        self.policy = policy
        # False once the backend refused search_dense's ``vectors`` keyword
        # (one written before it existed): the hop then lends what hits carry.
        self._lends = True

    def dense(
        self,
        ctx: RecallContext,
        vector: Any,
        where: Where | None = None,
        path: str = "dense",
        *,
        lend: bool = False,
    ) -> list[Hit]:
        """One dense search of the tenant; ``lend`` asks for the hits' vectors."""
        lend = lend and self._lends
        with telemetry.memory_span(
            telemetry.RECALL_DENSE, kind=telemetry.RETRIEVER, path=path
        ) as span:
            search = functools.partial(
                self.backend.search_dense,
                ctx.namespace,
                vector,
                where or ctx.wake,
                limit=ctx.limit,
            )
            try:
                hits = search(**asked_vectors(lend))
            except TypeError as exc:
                if not lend or "vectors" not in str(exc):
                    raise
                self._lends = False
                hits = search()
            span.set_attribute("hindsight.count", len(hits))
            return hits

    def lexical(
        self,
        ctx: RecallContext,
        terms: list[str],
        path: str = "lexical",
        where: Where | None = None,
    ) -> list[Hit]:
        with telemetry.memory_span(
            telemetry.RECALL_LEXICAL, kind=telemetry.RETRIEVER, path=path, terms=terms
        ) as span:
            hits = self.backend.search_lexical(
                ctx.namespace, terms, where or ctx.active, limit=ctx.limit
            )
            span.set_attribute("hindsight.count", len(hits))
            return hits

    def recent(self, ctx: RecallContext) -> list[MemoryRecord]:
        since = ctx.request.now - self.policy.recency_window_days * _DAY
        with telemetry.memory_span(
            telemetry.RECALL_RECENCY, kind=telemetry.RETRIEVER, path="recency"
        ) as span:
            rows = self.backend.query(
                ctx.namespace, replace(ctx.active, since=since), limit=ctx.limit
            )
            span.set_attribute("hindsight.count", len(rows))
        return rows

    def timed(self, ctx: RecallContext) -> list[MemoryRecord]:
        window = ctx.probe.window
        assert window is not None
        with telemetry.memory_span(
            telemetry.RECALL_TIME, kind=telemetry.RETRIEVER, path="time"
        ) as span:
            rows = self.backend.query(
                ctx.namespace,
                replace(ctx.active, since=window.start, until=window.end),
                limit=ctx.limit * 4,
            )
            span.set_attribute("hindsight.window", window.phrase)
            span.set_attribute("hindsight.count", len(rows))
        return rows
