"""The async API never blocks the event loop: opening, capture, recall, flush, forget, close.

The detector is deterministic: every blocking step (opening a backend, loading
an embedder, any backend call, any embedding, any fsync) records whether it ran
on a thread with a running event loop. None may.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import hindsight_lg.memory.engine as engine_module
from hindsight_lg import HindsightMemory
from hindsight_lg.backends import InMemoryBackend
from hindsight_lg.embeddings import default_embedder
from hindsight_lg.testing import HashingEmbedder

BACKEND_CALLS = (
    "setup",
    "upsert",
    "get",
    "query",
    "search_dense",
    "search_lexical",
    "count",
    "delete",
    "flush",
    "close",
)


class LoopBlockingDetector:
    """Records blocking calls made on a thread that runs an event loop."""

    def __init__(self) -> None:
        self.on_loop: list[str] = []
        self.calls = 0

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def spy(*args: Any, **kwargs: Any) -> Any:
            self.calls += 1
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                pass  # a worker thread: fine
            else:
                self.on_loop.append(name)
            return fn(*args, **kwargs)

        return spy


@pytest.fixture
def detector(monkeypatch: pytest.MonkeyPatch) -> Iterator[LoopBlockingDetector]:
    """Spies on opening, every backend call, embedding and fsync."""
    found = LoopBlockingDetector()
    for name in ("open_backend", "default_embedder"):
        monkeypatch.setattr(
            engine_module, name, found.wrap(name, getattr(engine_module, name))
        )
    for name in BACKEND_CALLS:
        original = getattr(InMemoryBackend, name)
        monkeypatch.setattr(InMemoryBackend, name, found.wrap(name, original))
    monkeypatch.setattr(
        HashingEmbedder, "embed", found.wrap("embed", HashingEmbedder.embed)
    )
    monkeypatch.setattr(os, "fsync", found.wrap("fsync", os.fsync))
    yield found


async def test_the_async_api_runs_nothing_blocking_on_the_loop(
    detector: LoopBlockingDetector, tmp_path: Path
) -> None:
    """afrom_uri, acapture, asubmit, arecall, aflush, aforget and aclose stay off the loop."""
    memory = await HindsightMemory.afrom_uri(
        ":memory:", embedder="hashing", spool=str(tmp_path / "spool")
    )
    async with memory:
        await memory.acapture("I prefer green tea over coffee", namespace="u1")
        await memory.asubmit("Remind me to call Anna on Friday", namespace="u1")
        await memory.aflush()
        result = await memory.arecall("tea", namespace="u1", timeout=None)
        await memory.aforget("u1", result.ids)
    assert result.ids
    assert detector.calls > 10
    assert [] == detector.on_loop


async def test_the_detector_sees_a_sync_open_inside_a_coroutine(
    detector: LoopBlockingDetector,
) -> None:
    """Calling from_uri in a coroutine is caught: the detector is not vacuous."""
    with HindsightMemory.from_uri(":memory:", embedder="hashing"):
        pass
    assert {"open_backend", "default_embedder", "setup"} <= set(detector.on_loop)


async def test_other_coroutines_run_while_memory_opens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A model load waiting on another coroutine finishes: the loop stayed free."""
    released = threading.Event()
    in_time: list[bool] = []

    def model_load_needing_the_loop(choice: Any = None) -> Any:
        # Returns once a coroutine has run; had the open blocked the loop,
        # this would give up after the timeout with the event unset.
        in_time.append(released.wait(timeout=30))
        return default_embedder(choice)

    monkeypatch.setattr(engine_module, "default_embedder", model_load_needing_the_loop)

    async def other_work() -> None:
        await asyncio.sleep(0)
        released.set()

    other = asyncio.create_task(other_work())
    memory = await HindsightMemory.afrom_uri(":memory:", embedder="hashing")
    await memory.aclose()
    await other
    assert [True] == in_time
