"""Cross-process compare-and-swap and leases on a real Milvus server."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus._lease import MilvusLeases, Ticket, _digest
from hindsight_lg.errors import StoreTimeout
from hindsight_lg.model import EdgeType
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

ROOT = Path(__file__).resolve().parents[2]
# 1,000 updates per process by default; HINDSIGHT_CAS_UPDATES shortens a local run.
UPDATES = int(os.environ.get("HINDSIGHT_CAS_UPDATES", "1000"))


@pytest.fixture
def second_backend(milvus_server_uri: str) -> Iterator[MilvusBackend]:
    """Another client of the same server and prefix, as another process would open."""
    backend = MilvusBackend(milvus_server_uri, prefix="hashing")
    backend.setup(dim=HashingEmbedder().dim, model_id=HashingEmbedder().model_id)
    yield backend
    backend.close()


def test_only_servers_get_leases(server_backend: MilvusBackend) -> None:
    """A server's exclusive section is a lease; single-process backends need none."""
    from contextlib import nullcontext

    with server_backend.exclusive("u1", "x"):
        assert server_backend._leases is not None
    assert isinstance(InMemoryBackend().exclusive("u1", "x"), nullcontext)


def test_a_choosing_ticket_or_a_smaller_number_goes_first() -> None:
    """The bakery order: wait while anyone chooses, then smallest (number, owner)."""
    mine = Ticket("b", 2, False, 0.0)
    assert not MilvusLeases._first(mine, [mine, Ticket("c", 0, True, 0.0)])
    assert not MilvusLeases._first(mine, [mine, Ticket("a", 2, False, 0.0)])
    assert MilvusLeases._first(mine, [mine, Ticket("c", 2, False, 0.0)])


def test_lease_excludes_concurrent_holders(
    server_backend: MilvusBackend, second_backend: MilvusBackend, namespace: str
) -> None:
    """A read-sleep-write counter under the lease loses no increment."""
    counter = [0]

    def bump(backend: MilvusBackend) -> None:
        leases = MilvusLeases(backend)
        for _ in range(15):
            with leases.hold(namespace, "counter"):
                seen = counter[0]
                time.sleep(0.005)  # widen the window a missing lease would lose
                counter[0] = seen + 1

    threads = [
        threading.Thread(target=bump, args=(b,))
        for b in (server_backend, second_backend)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 30 == counter[0]


def test_an_expired_ticket_does_not_block(
    server_backend: MilvusBackend, namespace: str
) -> None:
    """A crashed holder's ticket stops counting once it expires."""
    key = "lease:" + _digest(namespace, "x")
    MilvusLeases(server_backend, ttl=0.2)._write(key, "crashed", 1, choosing=True)
    time.sleep(0.3)
    with MilvusLeases(server_backend).hold(namespace, "x", timeout=5):
        pass


def test_a_held_lease_times_out_the_next_contender(
    server_backend: MilvusBackend, namespace: str
) -> None:
    """While one holder keeps the lease, another gives up with StoreTimeout."""
    leases = MilvusLeases(server_backend)
    with leases.hold(namespace, "y"), pytest.raises(StoreTimeout, match="held"):
        with leases.hold(namespace, "y", timeout=0.3):
            pass


def test_two_processes_lose_no_update(
    milvus_server_uri: str, server_backend: MilvusBackend, namespace: str
) -> None:
    """Two processes incrementing one memory by compare-and-swap lose no update."""
    with HindsightMemory(server_backend, HashingEmbedder(), cache=False) as memory:
        record = memory.remember("a shared counter", namespace=namespace)
        start_version = record.version
        args = [milvus_server_uri, "hashing", namespace, record.id, str(UPDATES)]
        workers = [
            subprocess.Popen(
                [sys.executable, "-m", "tests.server._cas_worker", *args],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        outs = [w.communicate(timeout=3600)[0] for w in workers]
        assert [0, 0] == [w.returncode for w in workers], outs
        final = memory.get(namespace, record.id)
    assert final is not None
    assert 2 * UPDATES == final.meta["count"]
    assert start_version + 2 * UPDATES == final.version


def test_one_consolidator_per_namespace(
    server_backend: MilvusBackend,
    second_backend: MilvusBackend,
    namespace: str,
    clock: FrozenClock,
) -> None:
    """Two engines consolidating one namespace at once consolidate each episode once."""
    engines = [
        HindsightMemory(b, HashingEmbedder(), clock=clock, cache=False)
        for b in (server_backend, second_backend)
    ]
    for i in range(4):
        engines[0].capture(
            f"Went hiking in the Harz mountains with Tom, day {i} of the trip",
            namespace=namespace,
        )
        clock.advance(days=1)
    written: list[int] = []
    threads = [
        threading.Thread(
            target=lambda e=e: written.append(len(e.consolidate(namespace)))
        )
        for e in engines
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    derived = [
        e.dst
        for e in server_backend.all_edges(namespace)
        if e.type is EdgeType.DERIVED_FROM
    ]
    assert [0, 1] == sorted(written)
    assert 4 == len(derived) == len(set(derived))
