"""One process owns a spool: a second opener, the CLI's forget included, is refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from hindsight_lg import HindsightMemory
from hindsight_lg._commands import portability
from hindsight_lg.cli import main
from hindsight_lg.errors import StoreLocked
from hindsight_lg.memory.durability.spool import Spool
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

#: Holds a spool with an in-memory store until told to go on, then exits.
HOLDER = """
import sys
from hindsight_lg.memory.durability.spool import Spool
spool = Spool(sys.argv[1]).open()
spool.append({"messages_or_text": "secret of gone", "namespace": "gone"})
print("READY", flush=True)
sys.stdin.readline()
"""

#: Captures on a Milvus Lite file (spool beside it), then again when told.
OWNER = """
import sys
from hindsight_lg import HindsightMemory
from hindsight_lg.testing import HashingEmbedder
m = HindsightMemory.from_uri(sys.argv[1], embedder=HashingEmbedder(), warm_up=False)
m.capture("I keep the spare key under the blue flowerpot", namespace="gone")
m.capture("My sister Ana lives in Lisbon", namespace="kept")
print("READY", flush=True)
sys.stdin.readline()
m.capture("I moved the spare key to the garage shelf", namespace="gone")
m.submit("Ana started a new job at the harbour museum", namespace="kept")
print("ACK", flush=True)
sys.stdin.readline()
"""


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    yield  # the CLI configures structlog, as applications do
    structlog.reset_defaults()


def _start(script: str, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        start_new_session=True,  # its Milvus Lite server dies with it
    )
    _expect(proc, "READY")
    return proc


def _expect(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert word == line, f"child said {line!r} (exit {proc.poll()})"


def _go_on(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.write("go\n")
    proc.stdin.flush()


def _kill(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:  # its Milvus Lite server too
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError("the killed owner is still running")


def _forget(capsys: pytest.CaptureFixture[str], spool: Path) -> tuple[int, str]:
    argv = ["forget", "--uri", ":memory:", "--embedder", "hashing", "-n", "gone"]
    code = main([*argv, "--spool", str(spool), "--yes"])
    return code, capsys.readouterr().err


def test_a_second_spool_in_one_process_is_refused_until_the_first_closes(
    tmp_path: Path,
) -> None:
    """Two Spool objects on one file would lose each other's lines: the second waits."""
    first = Spool(tmp_path / "s.spool").open()
    with pytest.raises(StoreLocked, match=f"this process \\(pid {os.getpid()}\\)"):
        Spool(tmp_path / "s.spool").open()
    assert (tmp_path / "s.spool.lock").read_text() == f"{os.getpid()}\n"
    first.close()
    Spool(tmp_path / "s.spool").open().close()


def test_forget_refuses_a_spool_a_live_process_holds_and_works_once_it_is_gone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI names the holder and changes nothing; after the holder dies it erases."""
    path = tmp_path / "s.spool"
    holder = _start(HOLDER, str(path))
    try:
        before = path.read_bytes()
        code, err = _forget(capsys, path)
        assert (code, path.read_bytes()) == (2, before)
        assert f"held by process {holder.pid}" in err
        assert "nothing was read or changed" in err
    finally:
        _kill(holder)  # a SIGKILL: the kernel lets go of the lock
    code, _ = _forget(capsys, path)
    assert (code, b"secret of gone" in path.read_bytes()) == (0, False)


def test_a_refused_forget_erases_nothing_from_the_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """The spool is checked before the store: a refusal leaves the tenant's memories."""
    backend = InMemoryBackend()
    seeded = HindsightMemory(backend, HashingEmbedder(), cache=False)
    seeded.capture("I keep the spare key under the blue flowerpot", namespace="gone")
    seeded.flush()
    monkeypatch.setattr(portability, "open_memory", lambda args, **kw: seeded)
    holder = _start(HOLDER, str(tmp_path / "s.spool"))
    try:
        code, err = _forget(capsys, tmp_path / "s.spool")
    finally:
        _kill(holder)
    after = HindsightMemory(backend, HashingEmbedder(), cache=False)
    assert (code, len(after.list_memories("gone"))) == (2, 1)
    assert "held by process" in err


def test_nothing_acknowledged_by_a_live_owner_is_lost_to_a_refused_forget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An owner on Milvus Lite goes on after the refusal; after its SIGKILL all is there."""
    db = tmp_path / "m.db"
    owner = _start(OWNER, str(db))
    try:
        with pytest.raises(StoreLocked, match=f"held by process {owner.pid}"):
            Spool(f"{db}.spool").open()
        code, err = _forget(capsys, Path(f"{db}.spool"))
        assert (code, f"process {owner.pid}" in err) == (2, True)
        _go_on(owner)
        _expect(owner, "ACK")  # both captures acknowledged after the refusal
    finally:
        _kill(owner)
    memory = HindsightMemory.from_uri(
        str(db), embedder=HashingEmbedder(), warm_up=False
    )
    try:
        memory.flush()
        texts = {
            ns: " ".join(r.content for r in memory.list_memories(ns))
            for ns in ("gone", "kept")
        }
    finally:
        memory.close()
    wanted = {"gone": ["blue flowerpot", "garage shelf"], "kept": ["Lisbon", "museum"]}
    found = {ns: [w for w in words if w in texts[ns]] for ns, words in wanted.items()}
    assert wanted == found
