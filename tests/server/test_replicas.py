"""Several app processes sharing one Milvus server, as replicas behind a load balancer.

Each replica is a process (``tests/server/_replica.py``) with its memory open
and its read cache warm. The bounds: a capture on one replica is recalled by
another within ``SEEN_WITHIN`` seconds (the writer's stamp is written by a
background thread and the other replica's next recall reads it; the bound is
slack for a loaded machine, the usual delay is one server time tick); a
forgotten memory is never
recalled again, by any replica, from the moment ``forget`` returns.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg.backends.milvus import MilvusBackend

ROOT = Path(__file__).resolve().parents[2]
SEEN_WITHIN = 20.0


class Replica:
    """A replica process and its command line."""

    def __init__(self, uri: str, prefix: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.server._replica", uri, prefix],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert "ready" == self._line()

    def _line(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line, "the replica exited"
        return json.loads(line)

    def ask(self, *parts: str) -> Any:
        """Send one command; return its answer (raise on the replica's error)."""
        assert self.proc.stdin is not None
        self.proc.stdin.write("\t".join(parts) + "\n")
        self.proc.stdin.flush()
        out = self._line()
        assert "error" not in out, out["error"]
        return out["ok"]

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture
def replicas(milvus_server_uri: str) -> Iterator[list[Replica]]:
    """Three replicas on one fresh store of the session's server.

    They start one after another: the first creates the store, as a deploy's
    first process does.
    """
    prefix = f"replicas_{uuid.uuid4().hex[:8]}"
    started = [Replica(milvus_server_uri, prefix) for _ in range(3)]
    yield started
    for r in started:
        r.close()
    cleanup = MilvusBackend.from_uri(milvus_server_uri, prefix=prefix)
    for collection in cleanup._client.list_collections():
        if collection.startswith(prefix + "_"):
            cleanup._client.drop_collection(collection)
    cleanup.close()


def test_a_capture_on_one_replica_is_recalled_by_another(
    replicas: list[Replica], namespace: str
) -> None:
    """Another replica, its cache already warm for the tenant, recalls a new memory."""
    a, b, _ = replicas
    [tea] = a.ask("capture", namespace, "I prefer green tea over coffee")
    # Another replica reads at Session consistency: it sees A's write within
    # about one server time tick, and this first recall warms its cache.
    start = time.monotonic()
    while tea not in b.ask("recall", namespace, "which tea does the user prefer?"):
        assert time.monotonic() - start < SEEN_WITHIN, "not seen within the bound"
        time.sleep(0.05)
    [lena] = a.ask("capture", namespace, "My sister Lena lives in Lisbon")
    start = time.monotonic()
    while lena not in b.ask("recall", namespace, "where does Lena live?"):
        assert time.monotonic() - start < SEEN_WITHIN, "not seen within the bound"
        time.sleep(0.2)


def test_no_replica_recalls_what_another_forgot(
    replicas: list[Replica], namespace: str
) -> None:
    """Forgotten on one replica, a memory is gone from every replica's next recall."""
    a, b, c = replicas
    [address] = a.ask("capture", namespace, "My home address is 12 Rua Augusta, Lisbon")
    for replica in (b, c):  # both load the tenant and see the memory
        start = time.monotonic()
        while address not in replica.ask("recall", namespace, "what is my address?"):
            assert time.monotonic() - start < SEEN_WITHIN
            time.sleep(0.2)
    assert 1 == a.ask("forget", namespace, address)
    for replica in (b, c):
        assert address not in replica.ask("recall", namespace, "what is my address?")


def test_two_replicas_correcting_one_memory_converge(
    replicas: list[Replica], namespace: str
) -> None:
    """Concurrent corrections of one memory leave one current version; none is lost."""
    a, b, c = replicas
    [old] = a.ask("capture", namespace, "I live in Hangzhou")
    answers: dict[str, Any] = {}

    def correct(replica: Replica, text: str) -> None:
        try:
            answers[text] = replica.ask("correct", namespace, old, text)
        except AssertionError as exc:  # the loser is told, not silently dropped
            answers[text] = str(exc)

    threads = [
        threading.Thread(target=correct, args=(r, t))
        for r, t in ((a, "I live in Shenzhen"), (b, "I live in Guangzhou"))
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    won = [v for v in answers.values() if not v.startswith(("ValueError", "Conflict"))]
    lost = [v for v in answers.values() if v not in won]
    active = c.ask("active", namespace)
    assert old not in active
    assert 1 == len(won) and 1 == len(lost), answers
    assert "superseded" in lost[0] or "Conflict" in lost[0], lost
    assert won[0] in active
