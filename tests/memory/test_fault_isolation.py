"""One tenant's bad turn never stops another's captures, recalls or forgetting."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import MAX_ID_BYTES, check_edge, fit_id
from hindsight_lg.errors import StoreError
from hindsight_lg.model import Edge, EdgeType, MemoryRecord, entity_id
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

LONG_TOKEN = "Q" + "x" * 120  # a pasted key: one capitalised word of 121 letters


class RefusingBackend(InMemoryBackend):
    """Refuses every write of namespace ``bad`` the way a Milvus server refuses
    a value longer than its field (a plain store error, not an outage)."""

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        if namespace == "bad":
            raise StoreError("writing memories: value too long for field (test)")
        super().upsert(namespace, records)


def _spooled(backend: InMemoryBackend, path: Path) -> HindsightMemory:
    return HindsightMemory(backend, HashingEmbedder(), spool=path, cache=False)


def test_entity_ids_of_any_length_fit_the_store() -> None:
    """An entity named by a long token gets an id within the store's 64 bytes."""
    for name in (LONG_TOKEN, "Ä" * 60, "数" * 40, "x" * 57):
        node = entity_id(name)
        check_edge(Edge("u", "m1", node, EdgeType.MENTIONS))
        assert len(node.encode()) <= MAX_ID_BYTES
    assert entity_id(LONG_TOKEN) == entity_id(LONG_TOKEN.lower())
    assert entity_id(LONG_TOKEN) != entity_id(LONG_TOKEN + "y")


def test_fit_id_keeps_short_ids_and_hashes_long_ones() -> None:
    """Short ids stay as they are; long ones are cut with a hash, never over."""
    assert fit_id("abc") == "abc"
    long = fit_id("é" * 100)
    assert (len(long.encode()) <= MAX_ID_BYTES, long != fit_id("é" * 101)) == (
        True,
        True,
    )


def test_a_long_capitalised_token_is_captured_with_edges_and_audit() -> None:
    """The turn that used to block every write lands whole: record, edges, audit."""
    backend = InMemoryBackend()
    memory = HindsightMemory(backend, HashingEmbedder(), cache=False)
    written = memory.capture(f"My key is {LONG_TOKEN} for Berlin.", namespace="u")
    edges = backend.all_edges("u")
    assert written and any(e.dst == entity_id(LONG_TOKEN) for e in edges)
    assert all(
        len(end.encode()) <= MAX_ID_BYTES for e in edges for end in (e.src, e.dst)
    )
    assert any(a.op == "create" for a in backend.audit("u"))


def test_a_refused_tenant_is_quarantined_and_others_go_on(tmp_path: Path) -> None:
    """A tenant whose writes the store refuses goes to the dead letters; the
    other tenant's captures are acked, and flush, forget and update work."""
    backend = RefusingBackend()
    memory = _spooled(backend, tmp_path / "s.spool")
    memory.capture("I adore rock climbing in Yosemite", namespace="bad")
    good = memory.capture("I prefer green tea over coffee", namespace="good")
    for _ in range(4):  # each round strikes the refused tenant once
        try:
            memory._parts().group.sync()  # type: ignore[union-attr]
        except StoreError:
            pass
    spool = memory.spool
    assert spool is not None
    assert [e.namespace for e in spool.dead()] == ["bad"]
    assert spool.pending() == []
    memory.flush()
    memory.update("good", good[0].id, importance=0.9)
    assert memory.forget("good", [good[0].id]) == 1
    memory.close()


def test_a_refusal_that_is_no_store_error_is_quarantined_at_once(
    tmp_path: Path,
) -> None:
    """A limit refusal (ValueError) cannot succeed later: dead-lettered in one round."""

    class Strict(InMemoryBackend):
        def add_edges(self, namespace: str, edges: Sequence[Any]) -> None:
            if namespace == "bad":
                raise ValueError("edge end over 64 bytes (test)")
            super().add_edges(namespace, edges)

    memory = _spooled(Strict(), tmp_path / "s.spool")
    memory.capture("My sister Ana lives in Lisbon", namespace="bad")
    memory.capture("My brother Leo lives in Porto", namespace="good")
    memory._parts().group.sync()  # type: ignore[union-attr]  # one round, no retry
    memory.flush()
    spool = memory.spool
    assert spool is not None
    assert ([e.namespace for e in spool.dead()], spool.pending()) == (["bad"], [])
    assert memory.list_memories("good")
    memory.close()


def test_an_oversized_remember_writes_nothing() -> None:
    """A memory larger than the store holds is refused before any write."""
    backend = InMemoryBackend()
    memory = HindsightMemory(backend, HashingEmbedder(), cache=False)
    with pytest.raises(ValueError, match="bytes"):
        memory.remember("x" * 70_000, namespace="u")
    assert (backend.all_edges("u"), backend.audit("u"), memory.list_memories("u")) == (
        [],
        [],
        [],
    )
