"""A capture's tenant loads into the read cache while the capture encodes."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import ForwardingBackend, InMemoryBackend, Where
from hindsight_lg.embeddings import HashingEmbedder
from hindsight_lg.model import MemoryRecord


class RemoteStore(ForwardingBackend):
    """An in-memory store read like a server's (cached with expiry); logs loads."""

    def __init__(self, delay: float = 0.0) -> None:
        super().__init__(InMemoryBackend())
        self.delay = delay
        self.loads: list[tuple[str, str]] = []  # (namespace, thread name)
        self.vectors: list[bool] = []  # per load: were the vectors read
        self.lock = threading.Lock()

    def query(
        self, namespace: str, where: Where, *, limit: int = 1000, vectors: bool = False
    ) -> list[MemoryRecord]:
        if limit > 1000:  # the read cache loading a tenant (or its vectors)
            with self.lock:
                self.loads.append((namespace, threading.current_thread().name))
                self.vectors.append(vectors)
            time.sleep(self.delay)
        return super().query(namespace, where, limit=limit, vectors=vectors)

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        super().upsert(namespace, records)


def memory_on(store: RemoteStore, tmp_path: Path, **kw: Any) -> HindsightMemory:
    return HindsightMemory(
        store, HashingEmbedder(), spool=str(tmp_path / "m.spool"), **kw
    )


def test_a_capture_loads_its_tenant_on_a_prefetch_thread(tmp_path: Path) -> None:
    """The tenant's load runs beside the capture, and the capture still finds it."""
    store = RemoteStore()
    memory = memory_on(store, tmp_path)
    try:
        memory.capture("I moved to Lisbon last spring", namespace="u1", speaker="user")
        memory.capture("I moved to Lisbon last spring", namespace="u1", speaker="user")
        memory.flush()
        threads = [name for ns, name in store.loads if ns == "u1"]
        assert threads and all(n.startswith("hindsight-prefetch") for n in threads)
        # The restatement merged into the first capture's memory: one record.
        assert memory.count("u1", Where()) == 1
    finally:
        memory.close()


def test_a_new_tenant_loads_with_its_vectors_in_one_read(tmp_path: Path) -> None:
    """The capture's tenant load reads the records and their vectors at once.

    The near-duplicate check searches the tenant's vectors: a load without
    them would be followed by a second read of every record, with vectors.
    """
    store = RemoteStore()
    memory = memory_on(store, tmp_path)
    try:
        memory.capture("I moved to Lisbon last spring", namespace="u1", speaker="user")
        memory.capture("My sister Mei plays cello", namespace="u1", speaker="user")
        memory.flush()
        assert [ns for ns, _ in store.loads] == ["u1"]
        assert store.vectors == [True]
        assert memory.count("u1", Where()) == 2
    finally:
        memory.close()


def test_queued_captures_load_their_tenants_side_by_side(tmp_path: Path) -> None:
    """Tenants of captures waiting in the worker's queue load at once, not in turn."""
    store = RemoteStore(delay=0.2)
    memory = memory_on(store, tmp_path)
    try:
        memory.capture("warm the writer", namespace="w", speaker="user")
        started = time.monotonic()
        for i in range(8):
            memory.submit(
                f"My sister Mei plays cello {i}", namespace=f"t{i}", speaker="user"
            )
        memory.flush()
        took = time.monotonic() - started
        loaded = {
            ns for ns, name in store.loads if name.startswith("hindsight-prefetch")
        }
        # The first may load on the worker itself: it was taken before the rest queued.
        assert {f"t{i}" for i in range(1, 8)} <= loaded
        assert took < 6 * 0.2  # one after another: 1.6 s of loads alone
        assert all(memory.count(f"t{i}", Where()) == 1 for i in range(8))
    finally:
        memory.close()


class LoggedMemory(InMemoryBackend):
    """The in-memory backend, logging which threads read it."""

    def __init__(self) -> None:
        super().__init__()
        self.readers: set[str] = set()

    def count(self, namespace: str, where: Where) -> int:
        self.readers.add(threading.current_thread().name)
        return super().count(namespace, where)

    def search_dense(self, *args: Any, **kwargs: Any) -> Any:
        self.readers.add(threading.current_thread().name)
        return super().search_dense(*args, **kwargs)


def test_the_in_memory_store_loads_nothing_ahead(tmp_path: Path) -> None:
    """The in-memory backend is its own cache: nothing reads it ahead of a capture."""
    backend = LoggedMemory()
    memory = HindsightMemory(
        backend, HashingEmbedder(), spool=str(tmp_path / "m.spool")
    )
    try:
        memory.capture("I like green tea", namespace="u1", speaker="user")
        memory.flush()
        assert backend.readers  # the capture's own search read it
        assert not [n for n in backend.readers if n.startswith("hindsight-prefetch")]
        assert memory.count("u1", Where()) == 1
    finally:
        memory.close()
