"""The capture spool: fsync'd, checksummed, replayed once, and proven under SIGKILL."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.errors import StoreUnavailable
from hindsight_lg.memory.capture.spool import Spool
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

CHILD = Path(__file__).with_name("_capture_loop.py")
KILLS = 20


def test_pending_survives_reopen_and_ack_removes(tmp_path: Path) -> None:
    """An appended capture is pending after reopening; an acked one is not."""
    spool = Spool(tmp_path / "s.spool")
    a = spool.append({"messages_or_text": "one", "namespace": "u"})
    b = spool.append({"messages_or_text": "two", "namespace": "u"})
    spool.ack(a)
    os.close(spool._fd)  # no close(): simulate a crash (no compaction)
    again = Spool(tmp_path / "s.spool")
    assert [e.id for e in again.pending()] == [b]
    assert again.pending()[0].item["messages_or_text"] == "two"


def test_torn_and_corrupt_lines_are_skipped(tmp_path: Path) -> None:
    """A half-written tail or a flipped byte is skipped, never replayed as garbage."""
    path = tmp_path / "s.spool"
    spool = Spool(path)
    keep = spool.append({"messages_or_text": "kept", "namespace": "u"})
    spool.append({"messages_or_text": "flipped", "namespace": "u"})
    os.close(spool._fd)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b"flipped", b"flopped")
    path.write_bytes(b"".join(lines) + b'0badc0de {"op":"put","id":"x')
    again = Spool(path)
    assert [e.id for e in again.pending()] == [keep]
    assert again.corrupt_lines == 2


def test_purge_removes_tenant_content_from_disk(tmp_path: Path) -> None:
    """Purging a namespace rewrites the file without that tenant's text."""
    spool = Spool(tmp_path / "s.spool")
    spool.append({"messages_or_text": "secret of alice", "namespace": "alice"})
    spool.append({"messages_or_text": "note of bob", "namespace": "bob"})
    assert spool.purge("alice") == 1
    assert b"secret of alice" not in (tmp_path / "s.spool").read_bytes()
    assert [e.namespace for e in spool.pending()] == ["bob"]


def test_compaction_drops_acknowledged_entries(tmp_path: Path) -> None:
    """After enough acks the file holds only what is still pending."""
    spool = Spool(tmp_path / "s.spool", compact_after=3)
    ids = [
        spool.append({"messages_or_text": f"t{i}", "namespace": "u"}) for i in range(4)
    ]
    for cid in ids[:3]:
        spool.ack(cid)
    text = (tmp_path / "s.spool").read_text()
    assert (text.count('"op":"put"'), ids[3] in text) == (1, True)


class FlakyBackend(InMemoryBackend):
    """An in-memory backend whose writes fail while ``down`` is set."""

    down = False

    def upsert(self, namespace: str, records: Sequence[Any]) -> None:
        if self.down:
            raise StoreUnavailable("Milvus is unreachable (test)")
        super().upsert(namespace, records)

    def search_dense(self, *args: Any, **kwargs: Any) -> Any:
        if self.down:
            raise StoreUnavailable("Milvus is unreachable (test)")
        return super().search_dense(*args, **kwargs)


def _memory(backend: InMemoryBackend, spool: Path) -> HindsightMemory:
    return HindsightMemory(backend, HashingEmbedder(), spool=spool, cache=False)


def test_outage_spools_then_replays_exactly_once(tmp_path: Path) -> None:
    """While the store is down captures wait in the spool; later they land once."""
    backend = FlakyBackend()
    memory = _memory(backend, tmp_path / "s.spool")
    backend.down = True
    assert memory.capture("I prefer green tea over coffee", namespace="u") == []
    assert len(memory.spool.pending()) == 1  # type: ignore[union-attr]
    backend.down = False
    memory.capture("My sister Ana lives in Lisbon", namespace="u")
    contents = [r.content for r in memory.list_memories("u", history=True)]
    assert sum("green tea" in c for c in contents) == 1
    memory.flush()  # acks are written by the group commit
    assert memory.spool.pending() == []  # type: ignore[union-attr]
    memory.close()


def test_replay_after_finished_capture_does_not_duplicate(tmp_path: Path) -> None:
    """A capture that finished before a crash, but was not acked, only gets acked."""
    backend = InMemoryBackend()
    text = "I prefer green tea over coffee"
    first = _memory(backend, tmp_path / "a.spool")
    first.capture(text, namespace="u", capture_id=None)
    cid = first.spool.append({"messages_or_text": text, "namespace": "u"})  # type: ignore[union-attr]
    first._durable.run(cid, {"messages_or_text": text, "namespace": "u"}, check=False)  # type: ignore[union-attr]
    first.flush()  # the group commit writes the records and the marker
    audit_before = len(backend.audit("u"))
    crashed = Spool(tmp_path / "b.spool")
    crashed.append({"messages_or_text": text, "namespace": "u"}, capture_id=cid)
    os.close(crashed._fd)
    second = _memory(backend, tmp_path / "b.spool")  # replays on open
    assert (len(backend.audit("u")), second.spool.pending()) == (audit_before, [])  # type: ignore[union-attr]


def test_submit_is_durable_before_it_is_queued(tmp_path: Path) -> None:
    """A turn accepted by the background worker is on disk before submit returns."""
    memory = _memory(InMemoryBackend(), tmp_path / "s.spool")
    memory.worker.on_accept = _spy(memory.worker.on_accept, tmp_path / "s.spool")
    memory.submit("I prefer green tea over coffee", namespace="u")
    memory.flush()
    assert [r.content for r in memory.list_memories("u")] != []
    assert memory.spool.pending() == []  # type: ignore[union-attr]
    memory.close()


def _spy(accept: Any, path: Path) -> Any:
    def wrapped(item: dict[str, Any]) -> dict[str, Any]:
        out = accept(item)
        assert out["capture_id"] in path.read_text()
        return out

    return wrapped


def _wait_for(path: Path, prefix: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            for line in path.read_text().splitlines():
                if line.startswith(prefix):
                    return line
        time.sleep(0.02)
    raise AssertionError(f"capture loop wrote no {prefix!r} line in {timeout}s")


def _gone(pgid: int, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError("killed capture loop is still running")


@pytest.fixture()
def zygote() -> Iterator[subprocess.Popen[str]]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(CHILD)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


def _fork(
    zygote: subprocess.Popen[str], tmp_path: Path, cycle: int
) -> tuple[int, Path]:
    assert zygote.stdin is not None and zygote.stdout is not None
    out = tmp_path / f"out{cycle}.txt"
    args = (tmp_path / "m.db", tmp_path / "s.spool", cycle, out)
    zygote.stdin.write(" ".join(map(str, args)) + "\n")
    zygote.stdin.flush()
    return int(zygote.stdout.readline()), out


@pytest.mark.slow
def test_sigkill_loses_no_acknowledged_capture(
    zygote: subprocess.Popen[str], tmp_path: Path
) -> None:
    """Killed 20 times mid-capture, every acknowledged event is present exactly once."""
    rng = random.Random(6)
    acked: list[str] = []
    for cycle in range(KILLS + 1):
        pid, out = _fork(zygote, tmp_path, cycle)
        held = json.loads(_wait_for(out, "HELD ")[5:])
        if cycle < KILLS and cycle % 2:
            _wait_for(out, "ACK ")  # half the kills land after some captures
        if cycle < KILLS:
            time.sleep(rng.uniform(0.0, 0.6))
        os.killpg(pid, signal.SIGKILL)
        _gone(pid)
        wrong = {t: held.get(t, 0) for t in acked if held.get(t, 0) != 1}
        assert wrong == {}, f"after kill {cycle}: {wrong}"
        acked += [
            ln[4:] for ln in out.read_text().splitlines() if ln.startswith("ACK ")
        ]
    assert len(acked) >= KILLS // 2
