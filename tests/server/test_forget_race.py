"""A change of mind and a forget racing in two processes on a real Milvus server.

One process captures a statement that supersedes "I live in Paris" while
another forgets that memory, by its id or by its thread, both released by
one barrier. Each round has its own namespace and its own offset between the
two calls, swept from the forget starting first to the capture starting
well after it, so the capture's read-judge-write and the forget's deletes
interleave in every order. After each round, and again through a store
opened afresh once both processes have closed, the forgotten words must be
nowhere and the change of mind must be current exactly once.

Before captures took the namespace's forget lease to supersede, the rounds
where the capture started 0-50 ms after the forget failed in every run: the
capture had read the old memory before the forget deleted it and wrote it
back as superseded history after, words and all.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.memory.jobs.portability import export_namespace
from hindsight_lg.model import ENTITY_PREFIX, MemoryRecord
from hindsight_lg.testing import HashingEmbedder
from tests.server._race_worker import (
    CHANGE_OF_MIND,
    OLD_THREAD,
    Job,
    serve,
)

PREFIX = "hashing"  # the session's collections (conftest's server_backend)
ROUNDS = int(os.environ.get("HINDSIGHT_RACE_ROUNDS", "12"))
# The capture starts this long before (negative) to after the forget. On the
# test server a superseding capture takes 0.05-0.25 s and a forget 0.3-1 s:
# 12 rounds step by 50 ms from a capture done before the forget begins to one
# that starts while the forget holds the namespace.
EARLIEST, LATEST = -0.25, 0.3
FORGOTTEN = "paris"
EVERY_STATUS = ("active", "cold", "superseded", "archived", "deleted")
WAIT_S = 300.0


def offsets(rounds: int) -> list[float]:
    """``rounds`` capture offsets spread evenly from EARLIEST to LATEST."""
    step = (LATEST - EARLIEST) / max(rounds - 1, 1)
    return [EARLIEST + i * step for i in range(rounds)]


@pytest.fixture
def checker(
    milvus_server_uri: str, server_backend: MilvusBackend
) -> Iterator[HindsightMemory]:
    """An engine without a read cache whose reads all see every process's writes."""
    backend = MilvusBackend(milvus_server_uri, prefix=PREFIX, read_consistency="Strong")
    embedder = HashingEmbedder()
    backend.setup(dim=embedder.dim, model_id=embedder.model_id)
    with HindsightMemory(backend, embedder, cache=False) as memory:
        yield memory
    backend.close()


class Racers:
    """Two worker processes, each with its own engine, released by one barrier."""

    def __init__(self, uri: str) -> None:
        ctx = multiprocessing.get_context("spawn")  # no gRPC state forked
        self.start = ctx.Barrier(2)
        self.results: Any = ctx.Queue()
        self.jobs: list[Any] = [ctx.Queue(), ctx.Queue()]
        self.procs = [
            ctx.Process(target=serve, args=(uri, PREFIX, self.start, q, self.results))
            for q in self.jobs
        ]
        for proc in self.procs:
            proc.start()
        assert [("ready", ""), ("ready", "")] == [self._result() for _ in self.procs]

    def race(self, capture: Job, forget: Job) -> dict[str, str]:
        """Run both jobs at once; what each raised, by action ("" if nothing)."""
        self.jobs[0].put(capture)
        self.jobs[1].put(forget)
        return dict(self._result() for _ in self.procs)

    def _result(self) -> tuple[str, str]:
        got: tuple[str, str] = self.results.get(timeout=WAIT_S)
        return got

    def close(self) -> list[int | None]:
        """Stop both processes; their exit codes."""
        for q in self.jobs:
            q.put(None)
        for proc in self.procs:
            proc.join(timeout=WAIT_S)
        return [proc.exitcode for proc in self.procs]


def seed(memory: HindsightMemory) -> tuple[str, str]:
    """A fresh namespace holding "I live in Paris"; its namespace and id."""
    namespace = f"race-{uuid.uuid4().hex[:12]}"
    (old,) = memory.capture(
        "I live in Paris", namespace=namespace, thread_id=OLD_THREAD
    )
    return namespace, old.id


def leftovers(memory: HindsightMemory, namespace: str, old_id: str) -> list[str]:
    """Every trace of the forgotten memory, and every broken link, in a namespace."""
    records = memory.query(namespace, Where(statuses=EVERY_STATUS), limit=10_000)
    ids = {r.id for r in records}
    found = [f"record {r.id}" for r in records if _mentions(r.to_dict(vectors=False))]
    found += [f"record {old_id} is back" for r in records if r.id == old_id]
    found += [
        f"record {r.id} superseded by missing {r.superseded_by}"
        for r in records
        if r.superseded_by is not None and r.superseded_by not in ids
    ]
    for edge in memory.backend.all_edges(namespace):
        ends = (edge.src, edge.dst)
        if _mentions(edge.to_dict()) or any(
            end not in ids and not end.startswith(ENTITY_PREFIX) for end in ends
        ):
            found.append(f"edge {edge.to_dict()}")
    found += [
        f"audit {a.to_dict()}"
        for a in memory.audit(namespace)
        if _mentions(a.to_dict()) or a.memory_id == old_id
    ]
    out = io.StringIO()
    export_namespace(memory, namespace, out)
    if FORGOTTEN in out.getvalue().lower():
        found.append("export")
    return found


def _mentions(data: dict[str, Any]) -> bool:
    return FORGOTTEN in json.dumps(data, ensure_ascii=False).lower()


def current(memory: HindsightMemory, namespace: str) -> dict[str, list[str]]:
    """Where the change of mind shows: active memories and a recall's lines."""
    active = [r for r in memory.list_memories(namespace) if _is_new(r)]
    recalled = memory.recall(
        "Where do I live now?", namespace=namespace, timeout=None
    ).memories
    return {
        "active": [r.content for r in active],
        "recalled": [m.record.content for m in recalled if _is_new(m.record)],
        "recalled forgotten": [
            m.record.content for m in recalled if FORGOTTEN in m.record.content.lower()
        ],
    }


def _is_new(record: MemoryRecord) -> bool:
    return record.content == CHANGE_OF_MIND


ONCE = {
    "active": [CHANGE_OF_MIND],
    "recalled": [CHANGE_OF_MIND],
    "recalled forgotten": [],
}


@pytest.mark.parametrize("forget_by", ["id", "thread"])
def test_a_forget_racing_a_change_of_mind_leaves_no_trace(
    milvus_server_uri: str, checker: HindsightMemory, forget_by: str
) -> None:
    """Forgetting a memory while another process supersedes it leaves it nowhere."""
    forget = f"forget-{forget_by}"
    calm = {"capture": "", forget: ""}  # what each side raised: nothing
    rounds = [(*seed(checker), offset) for offset in offsets(ROUNDS)]
    seen = []
    racers = Racers(milvus_server_uri)
    try:
        for namespace, old_id, offset in rounds:
            raised = racers.race(
                Job("capture", namespace, old_id, max(offset, 0.0)),
                Job(forget, namespace, old_id, max(-offset, 0.0)),
            )
            left = leftovers(checker, namespace, old_id)
            seen.append((offset, raised, left, current(checker, namespace)))
    finally:
        exits = racers.close()
    assert [0, 0] == exits
    assert [(offset, calm, [], ONCE) for offset, *_ in seen] == seen
    with HindsightMemory.from_uri(
        milvus_server_uri, embedder="hashing", prefix=PREFIX
    ) as reopened:
        for namespace, old_id, _ in rounds:
            assert [] == leftovers(reopened, namespace, old_id)
            assert ONCE == current(reopened, namespace)
