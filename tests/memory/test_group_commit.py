"""Group commit writes the store without holding up captures that stage meanwhile."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg.backends import ForwardingBackend, InMemoryBackend, Where
from hindsight_lg.errors import StoreError
from hindsight_lg.memory.durability.commit import GroupCommit
from hindsight_lg.memory.durability.spool import Spool, marker_id
from hindsight_lg.memory.durability.staging import StagedWrites
from hindsight_lg.model import AuditEntry, Edge, EdgeType, MemoryRecord

NS = "u1"


class SlowStore(ForwardingBackend):
    """Upserts wait for ``release`` once ``hold`` is set; ``fail`` refuses edges."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.hold = False
        self.entered = threading.Event()
        self.release = threading.Event()
        self.fail = False

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        if self.hold:
            self.entered.set()
            assert self.release.wait(10)
        super().upsert(namespace, records)

    def add_edges(self, namespace: str, edges: Sequence[Edge]) -> None:
        if self.fail:
            raise StoreError("edges refused")
        super().add_edges(namespace, edges)


@pytest.fixture
def parts(tmp_path: Path) -> Iterator[tuple[SlowStore, GroupCommit]]:
    inner = InMemoryBackend()
    inner.setup(dim=2, model_id="test")
    store = SlowStore(inner)
    group = GroupCommit(store, Spool(tmp_path / "c.spool").open(), interval_s=60)
    yield store, group
    store.hold = False
    store.release.set()
    group.close()


def record(content: str, version: int = 1, record_id: str = "") -> MemoryRecord:
    r = MemoryRecord(namespace=NS, content=content, dense=[1.0, 0.0], version=version)
    if record_id:
        r.id = record_id
    return r


def stage(group: GroupCommit, *records: MemoryRecord, edges: int = 0) -> str:
    """Stage one capture's writes the way the writer does; returns its id."""
    staged = StagedWrites(group.stage)
    staged.upsert(NS, list(records))
    first = records[0].id
    staged.add_edges(
        NS, [Edge(NS, first, f"x{i}", EdgeType.PRECEDES) for i in range(edges)]
    )
    staged.append_audit(NS, [AuditEntry(NS, first, "create")])
    capture_id = group.spool.append({"messages_or_text": "t", "namespace": NS})
    group.take(staged, NS, capture_id)
    return capture_id


def test_captures_stage_and_read_while_the_store_is_written(
    parts: tuple[SlowStore, GroupCommit],
) -> None:
    """A capture during a drain's store write neither waits nor loses its record."""
    store, group = parts
    first = record("I live in Berlin", record_id="a")
    stage(group, first)
    store.hold = True
    drain = threading.Thread(target=group.drain)
    drain.start()
    assert store.entered.wait(10)
    # The drain is inside the store's upsert: the stage is free.
    newer = record("I live in Berlin now", version=2, record_id="a")
    taken: list[str] = []
    capture = threading.Thread(
        target=lambda: taken.append(stage(group, newer, record("tea", record_id="b")))
    )
    capture.start()
    capture.join(5)
    assert taken, "a capture waited for the store write of an earlier round"
    second = taken[0]
    found = group.stage.get(NS, ["a", "b"])
    assert [(r.id, r.version) for r in found] == [("a", 2), ("b", 1)]
    hits = group.stage.search_dense(NS, [1.0, 0.0], Where(), limit=5)
    assert {h.record.id for h in hits} == {"a", "b"}
    store.release.set()
    drain.join(10)
    store.hold = False
    # The record staged again during the write is written by the next round,
    # and the capture taken meanwhile waits for it.
    assert [c for _, c in group.stage.captures] == [second]
    group.sync()
    stored = store.inner.get(NS, ["a", "b"])
    assert [(r.id, r.version) for r in stored] == [("a", 2), ("b", 1)]
    assert group.spool.pending() == []


def test_a_failed_round_keeps_what_it_did_not_write(
    parts: tuple[SlowStore, GroupCommit],
) -> None:
    """Edges and audit entries a refused round did not write are written next time."""
    store, group = parts
    store.fail = True
    capture_id = stage(group, record("I like tea", record_id="t"), edges=2)
    with pytest.raises(StoreError):
        group.sync()
    assert [c for _, c in group.stage.captures] == [capture_id]
    store.fail = False
    group.sync()
    assert len(store.inner.all_edges(NS)) == 2
    assert [a.op for a in store.inner.audit(NS, "t")] == ["create"]
    assert group.spool.pending() == []


class CombiningStore(ForwardingBackend):
    """Says it combines concurrent writes; counts writes in flight at once."""

    def __init__(self, inner: Any, refuse: str = "") -> None:
        super().__init__(inner)
        self.refuse = refuse
        self.lock = threading.Lock()
        self.flying = 0
        self.most = 0

    def combined_writes(self) -> bool:
        return True

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        with self.lock:
            self.flying += 1
            self.most = max(self.most, self.flying)
        try:
            time.sleep(0.02)  # a round trip: the other tenants' writes start meanwhile
            if namespace == self.refuse:
                raise StoreError("refused")
            super().upsert(namespace, records)
        finally:
            with self.lock:
                self.flying -= 1


def stage_in(group: GroupCommit, namespace: str, content: str) -> str:
    staged = StagedWrites(group.stage)
    r = MemoryRecord(namespace=namespace, content=content, dense=[1.0, 0.0])
    staged.upsert(namespace, [r])
    staged.append_audit(namespace, [AuditEntry(namespace, r.id, "create")])
    capture_id = group.spool.append(
        {"messages_or_text": content, "namespace": namespace}
    )
    group.take(staged, namespace, capture_id)
    return capture_id


@pytest.mark.parametrize("refuse", ["", "t3"])
def test_a_round_writes_tenants_at_once_where_the_store_combines(
    tmp_path: Path, refuse: str
) -> None:
    """Tenants of one round are written side by side; a refused one fails alone."""
    inner = InMemoryBackend()
    inner.setup(dim=2, model_id="test")
    store = CombiningStore(inner, refuse=refuse)
    group = GroupCommit(store, Spool(tmp_path / "c.spool").open(), interval_s=60)
    try:
        ids = {f"t{i}": stage_in(group, f"t{i}", f"note {i}") for i in range(8)}
        if refuse:
            with pytest.raises(StoreError):
                group.sync()
        else:
            group.sync()
        assert store.most > 1
        written = {ns for ns in ids if inner.count(ns, Where()) == 1}
        assert written == set(ids) - {refuse}
        for ns in written:  # each landed tenant's capture has its marker
            assert [a.op for a in inner.audit(ns, marker_id(ids[ns]))] == ["captured"]
        pending = {e.id for e in group.spool.pending()}
        assert pending == ({ids[refuse]} if refuse else set())
    finally:
        group.close()


def test_a_slow_tenant_search_holds_no_stage_lock() -> None:
    """While one tenant's search waits on the store, the stage stays open to others.

    The staged rows are still found, and take precedence over the store's copy.
    """
    from hindsight_lg.memory.durability.commit import SharedStage

    entered, release = threading.Event(), threading.Event()

    class SlowSearch(ForwardingBackend):
        def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
            if name.startswith("search_dense"):  # a tenant loading on a server
                entered.set()
                release.wait(5)
            return super()._forward(name, *args, **kwargs)

    inner = InMemoryBackend()
    stored = MemoryRecord(namespace="a", content="stored", dense=[1.0, 0.0])
    inner.upsert("a", [stored])
    stage = SharedStage(SlowSearch(inner))
    stage.upsert("a", [stored.replace(content="staged")])
    found: list[str] = []

    def search() -> None:
        hits = stage.search_dense("a", [1.0, 0.0], Where(), limit=5)
        found.extend(h.record.content for h in hits)

    searching = threading.Thread(target=search)
    searching.start()
    free: list[bool] = []
    try:
        assert entered.wait(5)

        def take() -> None:
            free.append(stage.lock.acquire(timeout=1))
            if free[-1]:
                stage.lock.release()

        taker = threading.Thread(target=take)
        taker.start()
        taker.join()
    finally:
        release.set()
        searching.join()
    assert free == [True]  # taken by another thread while the search waited
    assert found == ["staged"]
