"""Durability of captures: checked at the spool's door, whole on disk, grouped, never stalled."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.errors import ConflictError, StoreUnavailable
from hindsight_lg.memory.durability import spool as spool_module
from hindsight_lg.memory.durability.commit import GroupCommit
from hindsight_lg.memory.durability.spool import Spool
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
from tests.memory._spools import crash


def _memory(backend: InMemoryBackend, spool: Path, **kw: Any) -> HindsightMemory:
    return HindsightMemory(backend, HashingEmbedder(dim=64), spool=spool, **kw)


def test_a_short_write_is_refused_and_leaves_no_torn_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk that takes half a line raises, acknowledges nothing, and is cut back."""
    path = tmp_path / "s.spool"
    spool = Spool(path)
    kept = spool.append({"messages_or_text": "kept", "namespace": "u"})
    size = path.stat().st_size
    real_write = os.write
    calls: list[int] = []

    def half_then_full(fd: int, data: Any) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(spool_module.os, "write", half_then_full)
    with pytest.raises(StoreUnavailable, match="could not be written"):
        spool.append({"messages_or_text": "lost", "namespace": "u"})
    monkeypatch.setattr(spool_module.os, "write", real_write)
    after = spool.append({"messages_or_text": "after", "namespace": "u"})
    crash(spool)
    again = Spool(path)
    assert (path.stat().st_size > size, [e.id for e in again.pending()]) == (
        True,
        [kept, after],
    )
    assert again.corrupt_lines == 0


def test_a_failed_fsync_is_not_an_acknowledgement(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """capture() raises when fsync fails, and the turn is not pending."""
    memory = _memory(InMemoryBackend(), tmp_path / "s.spool")

    def broken(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(spool_module.os, "fdatasync", broken)
    with pytest.raises(StoreUnavailable):
        memory.capture("I prefer green tea over coffee", namespace="u")
    assert memory.spool.pending() == []  # type: ignore[union-attr]
    monkeypatch.undo()
    memory.close()


@pytest.mark.parametrize(
    "fields",
    [
        {"agent_id": "a" * 513},
        {"thread_id": "线" * 200},  # 600 bytes of UTF-8
        {"event_time": float("inf")},
        {"event_time": 1e18},
    ],
)
def test_what_the_store_cannot_hold_is_refused_at_the_door(
    tmp_path: Path, fields: dict[str, Any]
) -> None:
    """capture() and submit() refuse unstorable fields before spooling anything."""
    memory = _memory(InMemoryBackend(), tmp_path / "s.spool")
    memory.setup()  # opened (a refusal itself opens nothing): the spool is there
    with pytest.raises(ValueError):
        memory.capture("I like tea", namespace="u", **fields)
    with pytest.raises(ValueError):
        memory.submit("I like tea", namespace="u", **fields)
    assert (tmp_path / "s.spool").read_bytes() == b""
    memory.close()


def test_a_message_name_or_id_no_store_can_hold_is_made_to_fit(tmp_path: Path) -> None:
    """NUL or a lone surrogate in a client's message name or id never drops the turn."""
    memory = _memory(InMemoryBackend(), tmp_path / "s.spool")
    turn = [
        {"role": "user", "content": "I like tea", "name": "A\x00na", "id": "m\ud83d"}
    ]
    memory.submit(turn, namespace="u")
    memory.flush()
    [record] = memory.list_memories("u")
    assert (record.participants, record.source_ids) == (["Ana"], ["m?"])
    assert memory.spool.dead() == []  # type: ignore[union-attr]
    memory.close()


@pytest.mark.parametrize(
    ("turn", "says"),
    [
        ("I like tea\x00", "NUL"),
        ("I like tea \ud800", "surrogate"),
        ([{"role": "user", "content": "I like \udfff tea"}], "surrogate"),
    ],
)
def test_a_turn_no_store_can_hold_is_refused_by_submit_too(
    tmp_path: Path, turn: Any, says: str
) -> None:
    """NUL or a lone surrogate in a turn is a ValueError at submit(), not a dead letter."""
    memory = _memory(InMemoryBackend(), tmp_path / "s.spool")
    for call in (memory.capture, memory.submit):
        with pytest.raises(ValueError, match=says):
            call(turn, namespace="u")
    memory.flush()
    assert (tmp_path / "s.spool").read_bytes() == b""
    assert memory.spool.dead() == []  # type: ignore[union-attr]
    memory.close()


@pytest.mark.parametrize("when", ["123", "1700000000.5", b"123", True, [1.0]])
@pytest.mark.parametrize("spooled", [True, False])
def test_an_event_time_that_is_not_a_number_is_refused_the_same_everywhere(
    tmp_path: Path, when: Any, spooled: bool
) -> None:
    """capture() and submit() refuse "123" and other non-numbers alike, spool or not."""
    spool = tmp_path / "s.spool"
    kw: dict[str, Any] = {"spool": spool} if spooled else {}
    with HindsightMemory(InMemoryBackend(), HashingEmbedder(dim=64), **kw) as memory:
        for call in (memory.capture, memory.submit):
            with pytest.raises(TypeError, match="event_time"):
                call("I like tea", namespace="u", event_time=when)
        memory.flush()
        assert [] == memory.list_memories("u", history=True)
    assert not spooled or spool.read_bytes() == b""


def _crashed_spool(path: Path, items: Sequence[dict[str, Any]]) -> list[str]:
    spool = Spool(path)
    ids = [spool.append(item) for item in items]
    crash(spool)  # a crash: no compaction, no ack
    return ids


def test_replay_quarantines_a_bad_entry_and_goes_on(tmp_path: Path) -> None:
    """An entry that cannot be written goes to the dead letters; the ones after it land."""
    path = tmp_path / "s.spool"
    bad_id, nul_id, good_id = _crashed_spool(
        path,
        [
            {"messages_or_text": "I like tea", "namespace": "u", "agent_id": "a" * 600},
            {"messages_or_text": "binary\x00data", "namespace": "u"},
            {"messages_or_text": "My sister Ana lives in Lisbon", "namespace": "u"},
        ],
    )
    memory = _memory(InMemoryBackend(), path)  # replays on open
    memory.flush()
    assert [r.content for r in memory.list_memories("u")] == [
        "My sister Ana lives in Lisbon"
    ]
    assert [e.id for e in memory.spool.dead()] == [bad_id, nul_id]  # type: ignore[union-attr]
    assert memory.spool.pending() == []  # type: ignore[union-attr]
    memory.close()
    dead = [
        json.loads(ln.split(" ", 1)[1])
        for ln in path.with_suffix(".spool.dead").read_text().splitlines()
    ]
    assert "ValueError" in dead[0]["error"] and good_id not in str(dead)


def test_a_failing_submitted_capture_is_quarantined_not_replayed(
    tmp_path: Path,
) -> None:
    """A queued capture that raises is moved to the dead letters, so reopening is clean."""
    backend = InMemoryBackend()
    memory = _memory(backend, tmp_path / "s.spool")
    durable = memory._parts().durable
    assert durable is not None
    real = durable._write

    def write(request: Any, capture_id: str | None) -> Any:
        if "poison" in str(request.content):  # what the door cannot foresee
            raise RuntimeError("the encode pipeline failed (test)")
        return real(request, capture_id)

    durable._write = write
    memory.submit("a poison turn", namespace="u")
    memory.submit("I prefer green tea over coffee", namespace="u")
    memory.close()
    again = _memory(backend, tmp_path / "s.spool")
    assert [len(again.spool.dead()), again.spool.pending()] == [1, []]  # type: ignore[union-attr]
    assert [r.content for r in again.list_memories("u")] == [
        "I prefer green tea over coffee"
    ]
    again.close()


def test_capture_returns_records_that_recall_sees_before_the_batch_is_written(
    tmp_path: Path,
) -> None:
    """With group commit the caller gets its records and reads them at once."""
    backend = InMemoryBackend()
    memory = _memory(backend, tmp_path / "s.spool")
    assert isinstance(memory._parts().group, GroupCommit)
    memory._parts().group.interval_s = 60.0  # nothing is committed by the timer here
    [record] = memory.capture("I prefer green tea over coffee", namespace="u")
    assert backend.get("u", [record.id]) == []  # staged, not written yet
    found = memory.recall("green tea", namespace="u", timeout=None)
    assert [m.id for m in found.records] == [record.id]
    memory.close()


def test_a_crash_before_the_batch_is_written_replays_each_capture_once(
    tmp_path: Path,
) -> None:
    """Staged captures lost to a crash come back from the spool, exactly once."""
    backend = InMemoryBackend()
    first = _memory(backend, tmp_path / "s.spool")
    first._parts().group.interval_s = 60.0  # type: ignore[union-attr]
    texts = [f"My friend number {i} lives in city {i}" for i in range(5)]
    for text in texts:
        first.capture(text, namespace="u")
    # Killed: the stage is lost, the spool file is what the next process finds.
    shutil.copy(tmp_path / "s.spool", tmp_path / "after.spool")
    second = _memory(backend, tmp_path / "after.spool")
    second.flush()
    contents = sorted(r.content for r in second.list_memories("u"))
    assert contents == sorted(texts)
    assert second.spool.pending() == []  # type: ignore[union-attr]
    second.close()


def test_back_to_back_captures_share_one_flush(tmp_path: Path) -> None:
    """Twenty captures in a row cost one or two store flushes, not twenty."""
    flushes: list[int] = []

    class Counting(InMemoryBackend):
        def flush(self) -> None:
            flushes.append(1)

    memory = _memory(Counting(), tmp_path / "s.spool", cache=False)
    memory._parts().group.interval_s = 60.0  # type: ignore[union-attr]
    for i in range(20):
        memory.capture(f"Note {i}: I visited museum number {i}", namespace="u")
    memory._parts().group.sync()  # type: ignore[union-attr]
    assert 1 <= len(flushes) <= 2
    memory.close()


class _Gate:
    """An embedder that blocks texts holding a marker until released."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(dim=64)
        self.dim, self.model_id = self.inner.dim, self.inner.model_id
        self.entered, self.release = threading.Event(), threading.Event()
        self.longest = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.longest = max([self.longest, *map(len, texts)])
        if any("SLOWTURN" in t for t in texts):
            self.entered.set()
            self.release.wait(10)
        return self.inner.embed(texts)


def test_a_slow_capture_does_not_block_another_namespace() -> None:
    """While one tenant's capture is stuck in embedding, another tenant's completes."""
    gate = _Gate()
    memory = HindsightMemory(InMemoryBackend(), gate)  # type: ignore[arg-type]
    slow = threading.Thread(
        target=memory.capture, args=("SLOWTURN I like jazz",), kwargs={"namespace": "a"}
    )
    slow.start()
    assert gate.entered.wait(5)
    done = threading.Thread(
        target=memory.capture, args=("I like tea",), kwargs={"namespace": "b"}
    )
    done.start()
    done.join(5)
    finished = not done.is_alive()
    gate.release.set()
    slow.join(10)
    assert finished
    memory.close()


def test_a_huge_turn_is_cut_before_it_is_split_or_embedded() -> None:
    """A 2 MB turn never reaches the embedder whole: it is capped first."""
    gate = _Gate()
    memory = HindsightMemory(InMemoryBackend(), gate)  # type: ignore[arg-type]
    turn = "I went hiking with Maya in Lisbon. " * 60_000
    written = memory.capture(turn, namespace="u")
    limit = memory.policy.max_content_chars
    assert written and all(r.meta.get("truncated") for r in written)
    assert gate.longest <= limit + 100
    memory.close()


def test_two_engines_on_one_lite_file_see_each_other(tmp_path: Path) -> None:
    """Engines opened on one Milvus Lite file in a process share its store and cache."""
    uri = str(tmp_path / "m.db")
    a = HindsightMemory.from_uri(uri, embedder=HashingEmbedder(dim=64))
    b = HindsightMemory.from_uri(uri, embedder=HashingEmbedder(dim=64))
    assert b.list_memories("u") == []  # b's view of the namespace is loaded
    [record] = a.capture("I prefer green tea over coffee", namespace="u")
    assert [r.id for r in b.list_memories("u")] == [record.id]
    stale = record.version
    a.update("u", record.id, expected_version=stale, importance=0.5)
    with pytest.raises(ConflictError):
        b.update("u", record.id, expected_version=stale, importance=0.6)
    fresh = b.get("u", record.id)
    assert fresh is not None
    b.update("u", record.id, expected_version=fresh.version, importance=0.6)
    a.close()
    assert b.get("u", record.id).importance == 0.6  # type: ignore[union-attr]
    b.close()
