"""One tenant's flood never makes another tenant's submit or recall wait for it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import ForwardingBackend, InMemoryBackend
from hindsight_lg.memory.durability.commit import DrainingBackend, GroupCommit
from hindsight_lg.memory.durability.lanes import Lanes
from hindsight_lg.memory.durability.spool import Spool
from hindsight_lg.memory.durability.staging import StagedWrites
from hindsight_lg.memory.durability.worker import CaptureWorker
from hindsight_lg.model import AuditEntry, MemoryRecord
from hindsight_lg.testing import HashingEmbedder

WAIT = 10.0  # seconds: generous, a loaded machine still answers far sooner


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, threading.Event]:
    """Run ``call`` on a daemon thread; the event is set once it returned."""
    returned = threading.Event()

    def run() -> None:
        call()
        returned.set()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, returned


def test_lanes_bound_each_lane_on_its_own() -> None:
    """A full lane refuses more; other lanes and barriers still have room."""
    lanes = Lanes(maxsize=2)
    assert [lanes.put(i, "flood", wait=False) for i in range(3)] == [
        True,
        True,
        False,
    ]
    assert (lanes.put("q", "quiet", wait=False), lanes.put("b", None, wait=False)) == (
        True,
        True,
    )
    assert (lanes.queued("flood"), lanes.queued("quiet"), lanes.queued(None)) == (
        2,
        1,
        1,
    )
    assert lanes.get() == ("flood", 0)
    assert lanes.put(2, "flood", wait=False)  # the worker took one: room again


def test_a_full_lane_makes_only_its_own_tenant_wait() -> None:
    """With tenant a's lane full, a's next submit waits and b's returns at once."""
    gate = threading.Event()
    seen: list[str] = []

    def capture(**item: Any) -> None:
        gate.wait(WAIT)
        seen.append(f"{item['namespace']}:{item['messages_or_text']}")

    worker = CaptureWorker(capture, maxsize=2)
    try:
        worker.submit({"messages_or_text": "0", "namespace": "a"})  # running
        for n in (1, 2):
            worker.submit({"messages_or_text": str(n), "namespace": "a"})
        flood, flood_done = _in_thread(
            lambda: worker.submit({"messages_or_text": "3", "namespace": "a"})
        )
        _, quiet_done = _in_thread(
            lambda: worker.submit({"messages_or_text": "hi", "namespace": "b"})
        )
        assert quiet_done.wait(WAIT), "b's submit waited for a's backlog"
        assert not flood_done.is_set()  # a's own bound still holds a back
    finally:
        gate.set()
    flood.join(WAIT)
    assert worker.flush(timeout=WAIT)
    worker.close()
    assert seen == ["a:0", "b:hi", "a:1", "a:2", "a:3"]


def test_a_flooding_tenant_does_not_hold_up_another_tenants_submit(
    tmp_path: Path,
) -> None:
    """Through the engine with a spool: b's turn is accepted while a's lane is full."""
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(dim=64), spool=tmp_path / "s.spool"
    )
    gate = threading.Event()
    try:
        memory.worker.defer(lambda: gate.wait(WAIT), "a")  # the worker is busy
        memory.worker.max_messages = 1  # a's turn below fills its lane (1,024 parts)
        flood = [{"role": "user", "content": f"note {i}"} for i in range(1024)]
        memory.submit(flood, namespace="a", dedupe=False)
        _, more_done = _in_thread(lambda: memory.submit("one more", namespace="a"))
        _, quiet_done = _in_thread(
            lambda: memory.submit("I prefer green tea", namespace="b")
        )
        assert quiet_done.wait(WAIT), "b's submit waited for a's backlog"
        assert not more_done.is_set()
        assert len(memory.spool.pending("b")) == 1  # type: ignore[union-attr]
        memory.forget("a")  # a's backlog goes: its waiting submit gets room
        assert more_done.wait(WAIT)
    finally:
        gate.set()
    memory.flush()
    assert [r.content for r in memory.list_memories("b")] == ["I prefer green tea"]
    memory.close()


class HeldStore(ForwardingBackend):
    """Upserts of the namespaces in ``held`` wait until ``release`` is set."""

    def __init__(self, inner: Any, held: set[str]) -> None:
        super().__init__(inner)
        self.held = held
        self.entered = threading.Event()
        self.release = threading.Event()
        self.upserted: list[str] = []

    def upsert(self, namespace: str, records: Sequence[MemoryRecord]) -> None:
        self.upserted.append(namespace)
        if namespace in self.held:
            self.entered.set()
            assert self.release.wait(WAIT)
        super().upsert(namespace, records)


@pytest.fixture
def held(tmp_path: Path) -> Iterator[tuple[HeldStore, GroupCommit, DrainingBackend]]:
    inner = InMemoryBackend()
    inner.setup(dim=2, model_id="test")
    store = HeldStore(inner, held={"a"})
    group = GroupCommit(store, Spool(tmp_path / "c.spool").open(), interval_s=60)
    yield store, group, DrainingBackend(store, group)
    store.release.set()
    group.close()


def _stage(group: GroupCommit, namespace: str, *texts: str) -> list[str]:
    """Stage one capture of ``namespace`` the way the writer does; its record ids."""
    staged = StagedWrites(group.stage)
    records = [
        MemoryRecord(namespace=namespace, content=t, dense=[1.0, 0.0]) for t in texts
    ]
    staged.upsert(namespace, records)
    staged.append_audit(namespace, [AuditEntry(namespace, records[0].id, "create")])
    capture_id = group.spool.append({"messages_or_text": "t", "namespace": namespace})
    group.take(staged, namespace, capture_id)
    return [r.id for r in records]


def test_a_read_of_one_tenant_writes_no_other_tenants_backlog(
    held: tuple[HeldStore, GroupCommit, DrainingBackend],
) -> None:
    """b's read writes b's staged records only; a's wait for the committer's round."""
    store, group, view = held
    store.held = set()
    _stage(group, "a", "a one", "a two")
    [b_id] = _stage(group, "b", "b one")
    assert [r.id for r in view.get("b", [b_id])] == [b_id]
    assert store.upserted == ["b"]
    group.sync()
    assert sorted(store.upserted) == ["a", "b"]
    assert group.spool.pending() == []


def test_a_read_waits_for_its_own_tenants_write_not_another_tenants(
    held: tuple[HeldStore, GroupCommit, DrainingBackend],
) -> None:
    """While a round is stuck writing a's records, b's read answers and a's waits."""
    store, group, view = held
    a_ids = _stage(group, "a", "a one", "a two", "a three")
    [b_id] = _stage(group, "b", "b one")
    committer, _ = _in_thread(group.drain)  # a full round, b's part goes first
    assert store.entered.wait(WAIT)
    found: list[list[str]] = []
    _, b_done = _in_thread(lambda: found.append([r.id for r in view.get("b", [b_id])]))
    _, a_done = _in_thread(lambda: found.append([r.id for r in view.get("a", a_ids)]))
    assert b_done.wait(WAIT), "b's read waited for a's write"
    assert (found, a_done.is_set()) == ([[b_id]], False)  # a's copy is not in yet
    store.release.set()
    assert a_done.wait(WAIT)
    committer.join(WAIT)
    assert sorted(found[1]) == sorted(a_ids)


def test_a_recall_answers_while_another_tenants_writes_are_stuck(
    tmp_path: Path,
) -> None:
    """Tenant b recalls its fact while the store hangs on writing a's captures."""
    store = HeldStore(InMemoryBackend(), held=set())
    memory = HindsightMemory(
        store, HashingEmbedder(dim=256), spool=tmp_path / "s.spool", cache=False
    )
    try:
        memory.capture("I prefer green tea over coffee", namespace="b")
        memory.flush()
        store.held = {"a"}
        memory.capture("My parcel goes to Lisbon", namespace="a")
        flushing, _ = _in_thread(memory.flush)  # stuck in a's write
        assert store.entered.wait(WAIT)
        answers: list[str] = []
        _, recalled = _in_thread(
            lambda: answers.extend(
                m.record.content
                for m in memory.recall(
                    "which tea does the user prefer", namespace="b", timeout=None
                ).memories
            )
        )
        assert recalled.wait(WAIT), "b's recall waited for a's write"
        assert answers == ["I prefer green tea over coffee"]
    finally:
        store.release.set()
    flushing.join(WAIT)
    memory.close()
