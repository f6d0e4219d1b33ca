"""Test doubles for hindsight-lg users: backend, embedder, chat model, span capture.

Example:
    >>> from hindsight_lg import HindsightMemory
    >>> from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
    >>> memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(dim=64))
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hindsight_lg.backends import InMemoryBackend
from hindsight_lg.chat import FakeToolChatModel, echo_memories, tool_call
from hindsight_lg.embeddings import HashingEmbedder

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan


class FrozenClock:
    """A settable clock (POSIX seconds) for deterministic lifecycle tests."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, days: float = 0.0, seconds: float = 0.0) -> None:
        """Move time forward."""
        self.now += days * 86400.0 + seconds


@contextmanager
def capture_spans() -> Iterator[list[ReadableSpan]]:
    """Collect finished spans in a list, with a private tracer provider.

    The global provider is swapped only for the duration of the block, since
    OpenTelemetry lets it be set once per process otherwise.
    """
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
        InMemorySpanExporter,
    )

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spans: list[ReadableSpan] = []
    previous = trace._TRACER_PROVIDER
    trace._TRACER_PROVIDER = provider
    try:
        yield spans
    finally:
        provider.force_flush()
        spans.extend(exporter.get_finished_spans())
        trace._TRACER_PROVIDER = previous


__all__ = [
    "FakeToolChatModel",
    "FrozenClock",
    "HashingEmbedder",
    "InMemoryBackend",
    "capture_spans",
    "echo_memories",
    "tool_call",
]
