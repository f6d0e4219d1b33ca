"""Concurrent writes to one collection share server calls, and fail only alone."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from hindsight_lg.backends.milvus._combine import WriteCombiner
from hindsight_lg.errors import StoreError, StoreUnavailable

Rows = list[dict[str, Any]]


class Server:
    """Records each call's rows; a call takes ``delay`` s; refuses rows marked bad."""

    def __init__(self, delay: float = 0.05, outage: bool = False) -> None:
        self.calls: list[Rows] = []
        self.delay = delay
        self.outage = outage
        self.lock = threading.Lock()

    def send(self, rows: Rows) -> None:
        time.sleep(self.delay)
        if self.outage:
            raise StoreUnavailable("server down")
        if any(r.get("bad") for r in rows):
            raise StoreError("row refused")
        with self.lock:
            self.calls.append(list(rows))


def write_at_once(
    combiner: WriteCombiner, server: Server, writes: list[Rows]
) -> list[Any]:
    """Each write from its own thread, all started together; their outcomes."""
    outcomes: list[Any] = [None] * len(writes)
    start = threading.Barrier(len(writes))

    def run(i: int) -> None:
        start.wait()
        try:
            combiner.write(("upsert", "c"), writes[i], server.send)
            outcomes[i] = "ok"
        except Exception as exc:
            outcomes[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(writes))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    return outcomes


def test_concurrent_writes_share_calls_and_every_row_lands() -> None:
    """Sixteen writes at once take far fewer than sixteen calls; no row is lost."""
    server = Server()
    writes = [[{"pk": f"n{i}-{j}"} for j in range(3)] for i in range(16)]
    outcomes = write_at_once(WriteCombiner(), server, writes)
    assert outcomes == ["ok"] * 16
    assert len(server.calls) <= 4
    sent = sorted(r["pk"] for call in server.calls for r in call)
    assert sent == sorted(r["pk"] for w in writes for r in w)


def test_a_lone_write_is_sent_as_it_is() -> None:
    """With nothing else in flight a write is one call of its own rows."""
    server = Server(delay=0)
    WriteCombiner().write(("upsert", "c"), [{"pk": "a"}], server.send)
    assert server.calls == [[{"pk": "a"}]]


def test_two_writes_of_one_row_never_share_a_call() -> None:
    """The same primary key twice goes in two calls, the later write last."""
    server = Server()
    combiner = WriteCombiner()
    first = threading.Thread(
        target=combiner.write,
        args=(("upsert", "c"), [{"pk": "x", "v": 0}], server.send),
    )
    first.start()
    time.sleep(0.01)  # the first call is in flight: the next three queue behind it
    later = [[{"pk": "x", "v": 1}], [{"pk": "y"}], [{"pk": "x", "v": 2}]]
    threads = [
        threading.Thread(target=combiner.write, args=(("upsert", "c"), w, server.send))
        for w in later
    ]
    for t in threads:
        t.start()
        time.sleep(0.002)  # queued in this order
    for t in [first, *threads]:
        t.join(10)
    for call in server.calls:
        keys = [r["pk"] for r in call]
        assert len(keys) == len(set(keys))
    versions = [r["v"] for call in server.calls for r in call if r["pk"] == "x"]
    assert versions == [0, 1, 2]


def test_a_refused_row_fails_its_own_write_only() -> None:
    """One tenant's bad row fails that write; the others sharing the call land."""
    server = Server()
    writes = [[{"pk": f"n{i}", "bad": i == 3}] for i in range(8)]
    outcomes = write_at_once(WriteCombiner(), server, writes)
    assert isinstance(outcomes[3], StoreError)
    assert [o for i, o in enumerate(outcomes) if i != 3] == ["ok"] * 7
    landed = {r["pk"] for call in server.calls for r in call}
    assert landed == {f"n{i}" for i in range(8) if i != 3}


def test_an_outage_fails_every_write_of_the_call() -> None:
    """A server that is down fails each write with the outage, as alone."""
    server = Server(outage=True)
    outcomes = write_at_once(
        WriteCombiner(), server, [[{"pk": f"n{i}"}] for i in range(6)]
    )
    assert all(isinstance(o, StoreUnavailable) for o in outcomes)


@pytest.mark.parametrize("rows", [4000, 100])
def test_a_call_carries_at_most_max_rows(rows: int) -> None:
    """Writes beyond the row bound of one call ride the next."""
    server = Server()
    writes = [[{"pk": f"n{i}-{j}"} for j in range(rows)] for i in range(4)]
    outcomes = write_at_once(WriteCombiner(), server, writes)
    assert outcomes == ["ok"] * 4
    assert all(len(call) <= 4096 for call in server.calls)
    assert sum(len(call) for call in server.calls) == 4 * rows
