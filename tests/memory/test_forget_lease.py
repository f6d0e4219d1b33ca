"""A capture's supersede and a forget share the namespace's forget lease.

On a Milvus server the lease keeps another process's forget out (the race
itself runs in ``tests/server/test_forget_race.py``); here a backend stands
in for that process: entering the lease, it forgets what it was told to, as
a forget that held the lease first would have.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

from hindsight_lg import HindsightMemory
from hindsight_lg.memory._locks import FORGET_LEASE
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


class ForgetsFirst(InMemoryBackend):
    """A store where another writer deletes ``doomed`` before a lease is granted."""

    def __init__(self) -> None:
        super().__init__()
        self.doomed: list[str] = []
        self.leases: list[tuple[str, str]] = []

    def exclusive(self, namespace: str, resource: str) -> AbstractContextManager[None]:
        self.leases.append((namespace, resource))
        return self._granted(namespace)

    @contextmanager
    def _granted(self, namespace: str) -> Iterator[None]:
        if self.doomed:
            self.delete(namespace, self.doomed)
            self.delete_edges(namespace, self.doomed)
            self.purge_audit(namespace, self.doomed)
            self.doomed = []
        yield


def open_memory() -> tuple[HindsightMemory, ForgetsFirst]:
    """An engine on a :class:`ForgetsFirst` store, set up for the hashing embedder."""
    backend = ForgetsFirst()
    embedder = HashingEmbedder()
    backend.setup(dim=embedder.dim, model_id=embedder.model_id)
    return HindsightMemory(backend, embedder), backend


def test_a_supersede_waits_for_the_forget_lease(namespace: str) -> None:
    """A change of mind takes its namespace's forget lease, as forgetting does."""
    memory, backend = open_memory()
    with memory:
        (old,) = memory.capture("I live in Paris", namespace=namespace)
        memory.capture("I moved to Berlin, I live in Berlin now", namespace=namespace)
        superseding = list(backend.leases)
        memory.forget(namespace, [old.id])
    assert [(namespace, FORGET_LEASE)] == superseding
    assert [(namespace, FORGET_LEASE)] * 2 == backend.leases


def test_a_memory_forgotten_before_the_lease_is_not_written_back(
    namespace: str,
) -> None:
    """A supersede whose stale memory was forgotten meanwhile only creates the new one."""
    memory, backend = open_memory()
    with memory:
        (old,) = memory.capture("I live in Paris", namespace=namespace)
        backend.doomed = [old.id]
        (new,) = memory.capture(
            "I moved to Berlin, I live in Berlin now", namespace=namespace
        )
        stored = memory.list_memories(namespace, history=True)
        edges = backend.all_edges(namespace)
        ops = [(a.memory_id, a.op) for a in memory.audit(namespace)]
    assert [new.id] == [r.id for r in stored]
    assert [] == [e for e in edges if old.id in (e.src, e.dst)]
    assert [(new.id, "create")] == ops
