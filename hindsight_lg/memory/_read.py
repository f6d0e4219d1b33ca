"""The engine's recall call: one checked recall, under its span and deadline.

A recall with a deadline runs on a pool of its own threads and the caller
waits at most that long: past it the turn goes on with what the recall's
dense search found, if that search is done (:mod:`.recall.early`), else
with an empty result; either is ``timed_out``. The recall finishes in the
background, unseen.
"""

from __future__ import annotations

import contextvars
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.memory.recall import RecallResult, Searcher
from hindsight_lg.memory.recall.early import Early
from hindsight_lg.memory.requests import RecallRequest


class RecallPath:
    """Runs checked recalls through the searcher, traced, within a deadline.

    Args:
        searcher: does the recall.
        pool: the threads recalls with a deadline run on.
        backend: the store searched (its name goes on the span).
    """

    def __init__(
        self, searcher: Searcher, pool: ThreadPoolExecutor, backend: MemoryBackend
    ) -> None:
        self._searcher = searcher
        self._pool = pool
        self._backend = backend

    def __call__(self, request: RecallRequest, limit: float | None) -> RecallResult:
        """Recall ``request``; empty with ``timed_out`` after ``limit`` seconds."""
        with telemetry.memory_span(
            telemetry.RECALL,
            telemetry.SEARCH_MEMORY,
            namespace=request.namespace,
            agent=request.agent_id or "",
            budget_tokens=request.budget_tokens,
            k=request.k,
            timeout_s=limit,
            **{
                "input.value": request.query,
                "gen_ai.retrieval.query.text": request.query,
                "gen_ai.data_source.id": self._backend.capabilities.name,
            },
        ) as span:
            if request.cut_chars:
                span.set_attribute("hindsight.query.cut_chars", request.cut_chars)
            if limit is None:
                result = self._searcher.recall(request)
            else:
                result = self._within(request, limit, span)
            result.cut_chars = request.cut_chars
            self._searcher.annotate(span, result)
            return result

    def _within(self, request: RecallRequest, limit: float, span: Any) -> RecallResult:
        # The worker thread must see the recall span as its parent: copy the
        # caller's context (executors do not carry contextvars over).
        ctx = contextvars.copy_context()
        early = Early()
        future = self._pool.submit(ctx.run, self._searcher.recall, request, early)
        try:
            return future.result(timeout=limit)
        except FutureTimeout:
            found = early.result()
            if found is not None and found.memories:
                telemetry.degrade(
                    telemetry.TIMEOUT,
                    f"recall took longer than {limit} s; the turn goes on with "
                    f"what its dense search found ({_memories(len(found))})",
                    span,
                    timeout_s=limit,
                    namespace=request.namespace,
                )
                return found
            telemetry.degrade(
                telemetry.TIMEOUT,
                f"recall took longer than {limit} s; the turn goes on without memories",
                span,
                timeout_s=limit,
                namespace=request.namespace,
            )
            return RecallResult(
                query=request.query,
                memories=[],
                budget_tokens=request.budget_tokens,
                timed_out=True,
            )


def _memories(n: int) -> str:
    return f"{n} memory" if n == 1 else f"{n} memories"
