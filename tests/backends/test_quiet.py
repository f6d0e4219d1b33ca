"""pymilvus and Milvus Lite noise stays out of the application's logs; the rest stays."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import hindsight_lg.backends.milvus  # noqa: F401  (installs the filters)

SCRIPT = textwrap.dedent(
    """
    import logging, sys
    logging.basicConfig(level=logging.INFO)
    from hindsight_lg import HindsightMemory
    with HindsightMemory.from_uri(sys.argv[1], embedder="hashing") as memory:
        memory.capture("I prefer green tea over coffee", namespace="u1")
        assert memory.list_memories("u1")
        assert memory.recall("tea", namespace="u1", timeout=None).memories
    logging.getLogger("pymilvus").warning("a real pymilvus warning")
    """
)


def test_a_lite_run_with_basic_config_logs_no_third_party_noise(
    tmp_path: Path,
) -> None:
    """With logging.basicConfig, a capture-list-recall run prints no mvccTs or gRPC noise."""
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "quiet.db")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert 0 == run.returncode, run.stderr[-2000:]
    for noise in ("mvccTs", "Method not implemented", "Traceback"):
        assert noise not in run.stderr, run.stderr[-2000:]
    assert "a real pymilvus warning" in run.stderr


IDLE = textwrap.dedent(
    """
    import sys, time
    from datetime import datetime
    from hindsight_lg import HindsightMemory
    with HindsightMemory.from_uri(sys.argv[1], embedder="hashing") as memory:
        memory.capture("I prefer green tea over coffee", namespace="u1")
        memory.flush()
        time.sleep(2)  # the pings that follow data (bandwidth probes) are done
        print("IDLE", datetime.now().strftime("%H:%M:%S.%f"), file=sys.stderr)
        time.sleep(float(sys.argv[2]))  # an agent waiting for its next turn
        print("IDLE", datetime.now().strftime("%H:%M:%S.%f"), file=sys.stderr)
        memory.capture("We moved to Porto last spring", namespace="u1")
        memory.flush()  # a write that reaches Milvus after the wait
        assert len(memory.list_memories("u1")) >= 2
    """
)


def test_an_idle_lite_store_is_not_pinged_into_a_goaway(tmp_path: Path) -> None:
    """An idle Lite store's channel sends no keepalive pings (the server answers

    them with "too_many_pings", an error on stderr and a reconnect) and still
    answers after the wait.
    """
    env = {**os.environ, "GRPC_TRACE": "http_keepalive", "GRPC_VERBOSITY": "debug"}
    run = subprocess.run(
        [sys.executable, "-c", IDLE, str(tmp_path / "idle.db"), "15"],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        env=env,
    )
    assert 0 == run.returncode, run.stderr[-2000:]
    start, end = re.findall(r"^IDLE (\S+)$", run.stderr, re.MULTILINE)
    # gRPC's trace lines start like "I1130 22:01:44.288697": compare the clock.
    pings = re.findall(r"^I\d{4} (\S+) .*received ping", run.stderr, re.MULTILINE)
    assert pings, "the gRPC ping trace is not on: nothing to judge"
    assert [t for t in pings if start < t < end] == [], run.stderr[-2000:]


def record(
    name: str, msg: str, level: int = logging.WARNING, exc: BaseException | None = None
) -> logging.LogRecord:
    info = (type(exc), exc, exc.__traceback__) if exc is not None else None
    return logging.LogRecord(name, level, __file__, 1, msg, None, info)


def passes(rec: logging.LogRecord) -> bool:
    return bool(logging.getLogger(rec.name).filter(rec))


def test_the_mvcc_fallback_warning_is_dropped_other_warnings_kept() -> None:
    """Only the iterator's mvccTs fallback is dropped; its other warnings pass."""
    name = "pymilvus.client.iterator.query_iterator"
    assert not passes(record(name, "failed to get mvccTs from milvus server, ..."))
    assert passes(record(name, "query iterator: offset too large"))


def _not_implemented_in(path: str) -> NotImplementedError:
    code = compile("raise NotImplementedError('Method not implemented!')", path, "exec")
    try:
        exec(code)
    except NotImplementedError as exc:
        return exc
    raise AssertionError("unreachable")


def test_only_milvus_lite_unimplemented_rpcs_are_dropped_from_grpc() -> None:
    """gRPC's traceback is dropped for Milvus Lite's stubs, kept for anyone else's."""
    msg = "Exception calling application: Method not implemented!"
    lite = _not_implemented_in("/site-packages/milvus/grpc_gen/milvus_pb2_grpc.py")
    mine = _not_implemented_in("/app/my_service_pb2_grpc.py")
    assert not passes(record("grpc._server", msg, logging.ERROR, lite))
    assert passes(record("grpc._server", msg, logging.ERROR, mine))


class DataDirLockedError(Exception):
    """Stands in for milvus_lite.exceptions.DataDirLockedError (matched by name)."""


def test_the_lock_traceback_is_dropped_other_start_failures_kept() -> None:
    """A Lite start failure from the file lock is dropped; any other one is logged."""
    name = "milvus_lite.server_manager"
    try:
        try:
            raise DataDirLockedError("another process holds the lock")
        except DataDirLockedError as inner:
            raise RuntimeError("start failed") from inner
    except RuntimeError as exc:
        locked = exc
    assert not passes(record(name, "Failed to start", logging.ERROR, locked))
    assert passes(record(name, "Failed to start", logging.ERROR, OSError("disk full")))


@pytest.mark.parametrize("name", ["pymilvus", "milvus_lite", "grpc"])
def test_parent_loggers_carry_no_filter(name: str) -> None:
    """Nothing is attached above the three named loggers."""
    assert [] == logging.getLogger(name).filters
