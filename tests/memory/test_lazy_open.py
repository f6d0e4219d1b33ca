"""A hand-built engine stores what it is given; its parts open at the first use."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg.backends import ForwardingBackend, InMemoryBackend, MemoryBackend
from hindsight_lg.embeddings import HashingEmbedder
from hindsight_lg.errors import StoreLocked
from hindsight_lg.memory import HindsightMemory, Spool


class Recording(ForwardingBackend):
    """Records every store call; ``setup`` raises while ``locked`` is set."""

    def __init__(self, inner: MemoryBackend, *, locked: bool = False) -> None:
        super().__init__(inner)
        self.calls: list[str] = []
        self.locked = locked
        self._calls_lock = threading.Lock()

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        with self._calls_lock:
            self.calls.append(name)
        if name == "setup" and self.locked:
            raise StoreLocked("the store is held by process 4242")
        return super()._forward(name, *args, **kwargs)


def test_construction_touches_neither_the_store_nor_the_spool(tmp_path: Path) -> None:
    """No store call, no spool file, no folder, until the first capture."""
    backend = Recording(InMemoryBackend())
    spool = tmp_path / "later" / "s.spool"
    memory = HindsightMemory(backend, HashingEmbedder(), spool=spool)
    assert ([], False) == (backend.calls, spool.parent.exists())
    memory.capture("I prefer green tea over coffee", namespace="u1")
    assert ("setup", True) == (backend.calls[0], spool.exists())
    assert ["I prefer green tea over coffee"] == [
        r.content for r in memory.recall("which tea?", namespace="u1").records
    ]
    memory.close()


def test_the_engines_attributes_open_it(tmp_path: Path) -> None:
    """Reading a part (the backend, the policy...) is a use: it opens the engine."""
    backend = Recording(InMemoryBackend())
    memory = HindsightMemory(backend, HashingEmbedder(dim=32))
    assert 32 == memory.embedder.dim
    assert ["setup"] == backend.calls
    assert memory.backend.capabilities.name == InMemoryBackend().capabilities.name
    assert ["setup"] == backend.calls  # opened once
    memory.close()


def test_a_failed_opening_raises_at_each_call_and_keeps_nothing(tmp_path: Path) -> None:
    """A locked store raises at the first call and the next; once free, it opens.

    The spool the failed opening took is let go between the tries: another
    spool on the file opens meanwhile (a second open in one process is refused
    while one holds it).
    """
    backend = Recording(InMemoryBackend(), locked=True)
    path = tmp_path / "s.spool"
    memory = HindsightMemory(backend, HashingEmbedder(), spool=path)
    for _ in range(2):
        with pytest.raises(StoreLocked, match="process 4242") as raised:
            memory.capture("I prefer green tea over coffee", namespace="u1")
        assert any("opening this HindsightMemory" in n for n in raised.value.__notes__)
        Spool(path).open().close()  # the engine holds no share of the spool
    assert ["setup", "setup"] == backend.calls
    backend.locked = False
    memory.capture("I prefer green tea over coffee", namespace="u1")
    memory.flush()
    assert 1 == memory.count("u1")
    memory.close()


def test_concurrent_first_calls_open_the_engine_once() -> None:
    """Eight threads' first calls at once: one opening, every call answered."""
    backend = Recording(InMemoryBackend())
    memory = HindsightMemory(backend, HashingEmbedder())
    start = threading.Barrier(8)
    answers: list[int] = []

    def first_call() -> None:
        start.wait()
        answers.append(len(memory.recall("tea?", namespace="u1").records))

    threads = [threading.Thread(target=first_call) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert ([0] * 8, 1) == (answers, backend.calls.count("setup"))
    memory.close()


def test_close_before_the_first_use_opens_nothing(tmp_path: Path) -> None:
    """close() of an unused engine makes no store call; the engine then refuses calls."""
    backend = Recording(InMemoryBackend())
    spool = tmp_path / "s.spool"
    memory = HindsightMemory(backend, HashingEmbedder(), spool=spool)
    memory.close()
    memory.close()
    assert ([], False) == (backend.calls, spool.exists())
    with pytest.raises(RuntimeError, match="closed before its first use"):
        memory.recall("tea?", namespace="u1")
    assert [] == backend.calls


def test_close_of_an_unopened_engine_closes_a_backend_it_owns() -> None:
    """owns_backend: close() closes it even if the engine never opened."""
    backend = Recording(InMemoryBackend(), locked=True)
    memory = HindsightMemory(backend, HashingEmbedder(), owns_backend=True)
    with pytest.raises(StoreLocked):
        memory.recall("tea?", namespace="u1")
    memory.close()
    assert ["setup", "close"] == backend.calls


def test_setup_opens_a_hand_built_engine_and_sets_the_store_up_once() -> None:
    """An explicit setup() is the opening; a second one sets the store up again."""
    backend = Recording(InMemoryBackend())
    memory = HindsightMemory(backend, HashingEmbedder())
    memory.setup()
    assert ["setup"] == backend.calls
    memory.setup()
    assert ["setup", "setup"] == backend.calls
    memory.close()


async def test_arecall_opens_a_hand_built_engine_off_the_event_loop() -> None:
    """The opening (store setup, spool replay) never blocks the loop."""
    opened_in: list[threading.Thread] = []

    class Where(Recording):
        def setup(self, *, dim: int, model_id: str) -> None:
            opened_in.append(threading.current_thread())
            super().setup(dim=dim, model_id=model_id)

    memory = HindsightMemory(Where(InMemoryBackend()), HashingEmbedder())
    result = await memory.arecall("tea?", namespace="u1")
    assert (0, [False]) == (
        len(result.records),
        [t is threading.current_thread() for t in opened_in],
    )
    await memory.aclose()
