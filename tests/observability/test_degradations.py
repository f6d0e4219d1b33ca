"""Degradations (fallback, spool) leave span events with a reason."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from opentelemetry.sdk.trace import ReadableSpan

from hindsight_lg import HindsightMemory, telemetry
from hindsight_lg.errors import StoreUnavailable
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend, capture_spans


def _events(spans: list[ReadableSpan], name: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (s.name, dict(e.attributes or {}))
        for s in spans
        for e in s.events
        if e.name == name
    ]


def test_degradation_outside_any_span_gets_a_span_of_its_own() -> None:
    """With no span to annotate, the degradation still reaches the trace."""
    with capture_spans() as spans:
        telemetry.degrade(telemetry.FALLBACK, "no BM25", log=False)
    assert _events(spans, "hindsight.fallback") == [
        ("hindsight.fallback", {"hindsight.reason": "no BM25"})
    ]


def test_failed_llm_extraction_is_a_fallback_event_on_encode() -> None:
    """A model answering nonsense makes encode fall back to heuristics, with a reason."""
    llm = FakeListChatModel(responses=["this is not JSON"])
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(dim=64), llm=llm)
    with capture_spans() as spans:
        written = memory.capture("I prefer green tea over coffee", namespace="u1")
    memory.close()
    assert len(written) == 1
    [(span, attrs)] = _events(spans, "hindsight.fallback")
    assert span == "hindsight.encode"
    assert "heuristics" in attrs["hindsight.reason"]


class _DownBackend(InMemoryBackend):
    """A backend whose writes fail: the store is down."""

    def upsert(self, namespace: str, records: Sequence[Any]) -> None:
        raise StoreUnavailable("Milvus is unreachable (test)")


def test_store_outage_is_a_spool_event_with_the_capture_id(tmp_path: Path) -> None:
    """A capture the store refuses waits in the spool, and the trace says so and why."""
    memory = HindsightMemory(
        _DownBackend(), HashingEmbedder(dim=64), spool=tmp_path / "s.spool"
    )
    with capture_spans() as spans:
        # Acknowledged by the spool; the store write fails in the group commit.
        assert memory.capture("I prefer green tea over coffee", namespace="u1")
        with pytest.raises(StoreUnavailable):
            memory.flush()
    attrs = _events(spans, "hindsight.spool")[0][1]
    [pending] = memory.spool.pending()  # type: ignore[union-attr]
    assert attrs["hindsight.capture_ids"] == pending.id
    assert "unreachable" in attrs["hindsight.error"]
    assert "spool" in attrs["hindsight.reason"]
    memory.close()
