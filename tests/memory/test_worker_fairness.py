"""Tenants take turns on the capture worker: a big turn never holds up a small one."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.errors import StoreUnavailable
from hindsight_lg.memory.durability import spool as spool_module
from hindsight_lg.memory.durability.lanes import Lanes
from hindsight_lg.memory.durability.worker import CaptureWorker
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


def _turn(n: int, tag: str = "m") -> list[dict[str, str]]:
    return [{"role": "user", "content": f"{tag}{i}"} for i in range(n)]


class Recorder:
    """A capture callable that records (namespace, message texts) per call.

    The first call waits at a gate, so everything submitted meanwhile queues.
    """

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str]]] = []
        self.gate = threading.Event()

    def __call__(self, **item: Any) -> None:
        self.gate.wait(5)
        messages = item["messages_or_text"]
        texts = (
            [m["content"] for m in messages]
            if isinstance(messages, list)
            else [messages]
        )
        self.calls.append((str(item["namespace"]), texts))

    def order(self) -> list[str]:
        return [ns for ns, _ in self.calls]


@pytest.fixture()
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    yield rec
    rec.gate.set()


def _worker(recorder: Recorder, **kw: Any) -> CaptureWorker:
    return CaptureWorker(recorder, **kw)


def test_a_small_turn_runs_after_at_most_one_batch_of_a_big_one(
    recorder: Recorder,
) -> None:
    """Tenant small's one line is the second call, behind 1 of big's 32 batches."""
    worker = _worker(recorder)
    worker.submit({"messages_or_text": _turn(2000), "namespace": "big"})
    worker.submit({"messages_or_text": "I prefer green tea", "namespace": "small"})
    recorder.gate.set()
    assert worker.flush(timeout=10)
    worker.close()
    big = [texts for ns, texts in recorder.calls if ns == "big"]
    assert recorder.order()[:2] == ["big", "small"]
    assert [len(t) for t in big] == [64] * 31 + [16]
    assert [m for t in big for m in t] == [f"m{i}" for i in range(2000)]


def test_busy_tenants_take_turns_one_batch_each(recorder: Recorder) -> None:
    """Three tenants with 3, 2 and 1 batches queued are served a, b, c, a, b, a."""
    worker = _worker(recorder, max_messages=10)
    for namespace, n in (("a", 30), ("b", 20), ("c", 10)):
        worker.submit({"messages_or_text": _turn(n, namespace), "namespace": namespace})
    recorder.gate.set()
    assert worker.flush(timeout=10)
    worker.close()
    assert recorder.order() == ["a", "b", "c", "a", "b", "a"]


def test_a_tenant_arriving_while_another_is_alone_is_served_next(
    recorder: Recorder,
) -> None:
    """The lane just served waits behind a lane that got work meanwhile."""
    worker = _worker(recorder, max_messages=10)
    worker.submit({"messages_or_text": _turn(50), "namespace": "big"})
    for i in range(3):
        worker.submit({"messages_or_text": f"line {i}", "namespace": f"t{i}"})
    recorder.gate.set()
    assert worker.flush(timeout=10)
    worker.close()
    assert recorder.order() == ["big", "t0", "t1", "t2", "big", "big", "big", "big"]


def test_piled_up_turns_of_one_tenant_share_a_call_up_to_max_messages(
    recorder: Recorder,
) -> None:
    """Small turns queued behind a busy worker merge, but never past max_messages."""
    worker = _worker(recorder, max_messages=8)
    recorder.gate.set()
    held = threading.Event()
    worker.defer(lambda: held.wait(5), "u")  # every turn below queues behind it
    worker.submit({"messages_or_text": _turn(1, "first"), "namespace": "u"})
    for i in range(6):
        worker.submit({"messages_or_text": _turn(3, f"t{i}-"), "namespace": "u"})
    held.set()
    assert worker.flush(timeout=10)
    worker.close()
    assert [len(texts) for _, texts in recorder.calls] == [1 + 3 + 3, 3 + 3, 3 + 3]


def test_a_job_for_a_tenant_waits_for_its_captures_only(recorder: Recorder) -> None:
    """defer(job, namespace) runs in that tenant's lane; defer(job) after everything."""
    worker = _worker(recorder, max_messages=10)
    worker.submit({"messages_or_text": _turn(30), "namespace": "big"})
    worker.submit({"messages_or_text": "hello", "namespace": "small"})
    worker.defer(lambda: recorder.calls.append(("small-job", [])), "small")
    worker.defer(lambda: recorder.calls.append(("barrier", [])))
    worker.submit({"messages_or_text": "later", "namespace": "small"})
    recorder.gate.set()
    assert worker.flush(timeout=10)
    worker.close()
    assert recorder.order() == [
        "big",
        "small",
        "big",
        "small-job",
        "big",
        "barrier",
        "small",
    ]


def test_cancel_and_pending_for_see_every_lane() -> None:
    """A forget drops the tenant's queued parts from its lane and leaves the others."""
    lanes = Lanes()
    for lane, entry in [("a", 1), ("b", 2), ("a", 3), (None, 4), ("a", 5)]:
        lanes.put(entry, lane)
    assert lanes.count(lambda e: e in (1, 3, 5)) == 3
    assert lanes.remove(lambda e: e in (1, 3, 5)) == 3
    assert [lanes.get() for _ in range(2)] == [("b", 2), (None, 4)]
    assert (lanes.unfinished, lanes.count(lambda e: True)) == (5 - 3, 0)


def test_a_big_turn_is_spooled_whole_with_one_fsync(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 200-message submit is 4 spool entries written with one fsync, or none."""
    syncs: list[int] = []
    real = spool_module.os.fdatasync
    monkeypatch.setattr(
        spool_module.os, "fdatasync", lambda fd: (syncs.append(fd), real(fd))[1]
    )
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(dim=64), spool=tmp_path / "s.spool"
    )
    gate = threading.Event()
    memory.worker.defer(lambda: gate.wait(10), "u")  # hold the worker
    memory.submit(_turn(200, "Note "), namespace="u", dedupe=False)
    assert (len(syncs), len(memory.spool.pending("u"))) == (1, 4)  # type: ignore[union-attr]

    def broken(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spool_module.os, "fdatasync", broken)
    with pytest.raises(StoreUnavailable):
        memory.submit(_turn(200, "Lost "), namespace="u", dedupe=False)
    assert (memory.worker.pending_for("u"), len(memory.spool.pending("u"))) == (4, 4)  # type: ignore[union-attr]
    monkeypatch.setattr(spool_module.os, "fdatasync", real)
    gate.set()
    memory.flush()
    assert memory.spool.pending() == []  # type: ignore[union-attr]
    memory.close()


def test_a_cut_turn_is_captured_whole(tmp_path: Path) -> None:
    """Every message of a turn cut into parts becomes a memory, and recall finds it."""
    with HindsightMemory(
        InMemoryBackend(), HashingEmbedder(dim=1024), spool=tmp_path / "s.spool"
    ) as memory:
        turn = [
            {"role": "user", "content": f"My parcel number {i} goes to Town{i}."}
            for i in range(150)
        ]
        memory.submit(turn, namespace="big")
        memory.submit("I prefer green tea over coffee", namespace="small")
        memory.flush()
        text = " ".join(r.content for r in memory.list_memories("big", limit=1000))
        assert [i for i in range(150) if f"Town{i}." not in text] == []
        hits = memory.recall("which tea does the user prefer", namespace="small", k=1)
        assert "green tea" in hits.memories[0].record.content
