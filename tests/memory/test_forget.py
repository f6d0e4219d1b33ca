"""Forget means gone: queued, spooled, staged, entity nodes, thread audit; verify counts all."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from hindsight_lg import HindsightMemory
from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.memory.jobs.erasure import forget_namespace
from hindsight_lg.model import Edge, EdgeType
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


class _Gate:
    """An embedder that blocks texts holding ``BLOCK`` until released."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(dim=64)
        self.dim, self.model_id = self.inner.dim, self.inner.model_id
        self.entered, self.release = threading.Event(), threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        if any("BLOCK" in t for t in texts):
            self.entered.set()
            self.release.wait(10)
        return self.inner.embed(texts)


ADDRESS = "My home address is 12 Rose Street in Lisbon"


def test_forget_cancels_queued_and_spooled_captures(tmp_path: Path) -> None:
    """Submits still queued when a tenant is forgotten never reach the store."""
    gate = _Gate()
    memory = HindsightMemory(InMemoryBackend(), gate, spool=tmp_path / "s.spool")  # type: ignore[arg-type]
    memory.submit("BLOCK I like jazz", namespace="other")
    assert gate.entered.wait(5)
    for i in range(5):
        memory.submit(f"{ADDRESS}, flat {i}", namespace="u")
    report = forget_namespace(memory, "u", verify=True)
    gate.release.set()
    memory.flush()
    assert report.left == {
        "records": 0,
        "edges": 0,
        "entity_nodes": 0,
        "audit": 0,
        "queued": 0,
        "spooled": 0,
    }
    assert report.removed["queued"] == 5
    assert memory.list_memories("u", history=True) == []
    assert b"Rose Street" not in (tmp_path / "s.spool").read_bytes()
    memory.close()


def test_forget_right_after_capture_leaves_no_marker_or_record(tmp_path: Path) -> None:
    """Captures still staged for the store are forgotten with the rest, audit included."""
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(dim=64), spool=tmp_path / "s.spool"
    )
    memory._parts().group.interval_s = 60.0  # type: ignore[union-attr]
    memory.capture(ADDRESS, namespace="u")
    report = forget_namespace(memory, "u", verify=True)
    assert report.clean, report.left
    memory.flush()
    assert (memory.list_memories("u", history=True), memory.audit("u")) == ([], [])
    memory.close()


def test_forget_removes_entity_nodes_only_the_forgotten_memories_used() -> None:
    """An entity node linked only from a forgotten memory loses all its edges."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(dim=64))
    secret = memory.remember(
        "John Smith's SSN is 123", namespace="u", entities=["John Smith SSN 123"]
    )
    kept = memory.remember("Acme is a client", namespace="u", entities=["Acme"])
    node, acme = "entity:john smith ssn 123", "entity:acme"
    memory.backend.add_edges("u", [Edge("u", node, acme, EdgeType.SUPPLEMENTS)])
    memory.forget("u", [secret.id])
    assert memory.backend.edges("u", [node]) == []
    assert [e.src for e in memory.backend.edges("u", [acme])] == [kept.id]
    memory.close()


def test_forgetting_a_namespace_removes_edges_between_entity_nodes() -> None:
    """Imported entity-to-entity edges go with the namespace, and verify sees them."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(dim=64))
    memory.remember("John Smith's SSN is 123", namespace="u", entities=["John Smith"])
    edge = Edge("u", "entity:john smith ssn 123", "entity:acme", EdgeType.SUPPLEMENTS)
    memory.backend.add_edges("u", [edge])
    report = forget_namespace(memory, "u", verify=True)
    assert (report.clean, memory.backend.all_edges("u")) == (True, [])
    memory.close()


def test_forget_thread_removes_its_unpromoted_turns_from_the_audit() -> None:
    """A thread's low-salience turns leave the audit trail when the thread is forgotten."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(dim=64))
    memory.capture("ok thanks!", namespace="u", thread_id="t1")
    memory.capture("ok great!", namespace="u", thread_id="t2")
    memory.forget("u", thread_id="t1")
    observed = [e.detail["content"] for e in memory.audit("u") if e.op == "observe"]
    assert observed == ["ok great!"]
    memory.close()
