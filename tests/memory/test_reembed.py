"""Re-embedding a Milvus Lite store with another model, switched atomically."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hindsight_lg import EmbeddingMismatch, HindsightMemory
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus.generations import _done as finished
from hindsight_lg.backends.milvus.generations import copy_generation, next_prefix
from hindsight_lg.memory.jobs.reembed import reembed
from hindsight_lg.testing import HashingEmbedder

TURNS = [
    "I prefer green tea over coffee",
    "My sister Anna lives in Lisbon",
    "Remind me to renew the passport next month",
]


def test_next_prefix_counts_revisions() -> None:
    """Each re-embed gets a fresh prefix after the active one."""
    assert ["h_r2", "h_r3"] == [next_prefix("h", "h"), next_prefix("h", "h_r2")]


QUESTIONS = ("Do I prefer tea?", "Where does Anna live?", "What should I renew?")


def _recalled(memory: HindsightMemory) -> set[str]:
    return {
        memory_id
        for q in QUESTIONS
        for memory_id in memory.recall(q, namespace="u1", timeout=None).ids
    }


def test_reembed_switches_the_store_to_the_new_model(tmp_path: Path) -> None:
    """After reembed the new embedder opens the store and recalls the same memories."""
    uri = str(tmp_path / "store.db")
    old, new = HashingEmbedder(64), HashingEmbedder(128)
    with HindsightMemory(MilvusBackend(uri), old, owns_backend=True) as memory:
        for turn in TURNS:
            memory.capture(turn, namespace="u1")
        before = _recalled(memory)
        stored = {r.content for r in memory.list_memories("u1")}
    report = reembed(uri, to=new)
    with HindsightMemory(MilvusBackend(uri), new, owns_backend=True) as memory:
        after = _recalled(memory)
        listed = {r.content for r in memory.list_memories("u1")}
    assert ("hindsight", "hindsight_r2", ["u1"]) == (
        report.old_prefix,
        report.new_prefix,
        report.namespaces,
    )
    assert len(before) == len(TURNS) and before == after
    assert stored == listed
    with pytest.raises(EmbeddingMismatch, match="hindsight-lg reembed"):
        HindsightMemory(MilvusBackend(uri), old, owns_backend=True).setup()


def test_reembed_keeps_turn_context_in_split_events(tmp_path: Path) -> None:
    """A split event's new vector is blended with its turn, as at capture."""
    uri = str(tmp_path / "store.db")
    new = HashingEmbedder(128)
    with HindsightMemory(
        MilvusBackend(uri), HashingEmbedder(64), owns_backend=True
    ) as m:
        m.capture("We went to the museum. The kids loved the bones.", namespace="u")
        m.capture("I prefer green tea over coffee", namespace="u")
    reembed(uri, to=new)
    backend = MilvusBackend(uri)
    backend.setup(dim=new.dim, model_id=new.model_id)
    try:
        rows = backend.query("u", Where(), limit=10, vectors=True)
    finally:
        backend.close()
    for r in rows:
        plain = np.asarray(new.embed([r.content])[0])
        cosine = float(np.dot(plain, r.dense) / np.linalg.norm(plain))
        split = "context" in r.meta
        assert (split, cosine > 0.999) in {(True, False), (False, True)}, r.content
    assert sum("context" in r.meta for r in rows) == 2


def fill(uri: str, namespaces: int = 3) -> None:
    """A Lite store with a few memories in each of ``namespaces`` tenants."""
    with HindsightMemory(
        MilvusBackend(uri), HashingEmbedder(64), owns_backend=True
    ) as memory:
        for i in range(namespaces):
            for turn in TURNS:
                memory.capture(turn, namespace=f"u{i}")


def collections(uri: str) -> set[str]:
    backend = MilvusBackend(uri)
    try:
        return set(backend._client.list_collections())
    finally:
        backend.close()


def test_a_failed_reembed_drops_its_collections_and_switches_nothing(
    tmp_path: Path,
) -> None:
    """An error mid-copy leaves no new collections, the old model in use, and a rerun works."""
    uri = str(tmp_path / "store.db")
    fill(uri)
    before = collections(uri)
    calls = []

    def flaky(batch: Any) -> None:
        calls.append(len(batch))
        if len(calls) == 2:
            raise RuntimeError("embedding server went away")
        for r in batch:
            r.dense = [0.1] * 128

    with pytest.raises(RuntimeError, match="went away"):
        copy_generation(uri, dim=128, model_id="m128", revector=flaky)
    assert before == collections(uri)
    with HindsightMemory(
        MilvusBackend(uri), HashingEmbedder(64), owns_backend=True
    ) as memory:
        assert 3 == len(memory.list_memories("u1"))
    report = reembed(uri, to=HashingEmbedder(128))
    assert ("hindsight_r2", ["u0", "u1", "u2"]) == (
        report.new_prefix,
        report.namespaces,
    )


# Fills the store and dies mid-reembed, in a process of its own: Milvus Lite
# keeps the file locked for the life of the process that opened it.
KILLED_RUN = """
import os, signal, sys
from hindsight_lg.memory.jobs.reembed import reembed
from hindsight_lg.testing import HashingEmbedder
from tests.memory.test_reembed import fill

fill(sys.argv[1])

class Dying(HashingEmbedder):
    calls = 0
    def embed(self, texts):
        Dying.calls += 1
        if Dying.calls == 2:  # the second namespace's batch
            os.kill(os.getpid(), signal.SIGKILL)
        return super().embed(texts)

reembed(sys.argv[1], to=Dying(128))
"""


def test_a_killed_reembed_resumes_where_it_stopped(tmp_path: Path) -> None:
    """After SIGKILL mid-copy, the next run finishes it: every record, edge and audit entry once."""
    uri = str(tmp_path / "store.db")
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_RUN, uri],
        capture_output=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    assert -signal.SIGKILL == killed.returncode, killed.stderr[-2000:]
    assert "hindsight_r2_memories" in collections(uri)
    leftover = MilvusBackend(uri, prefix="hindsight_r2")
    try:
        leftover._load("hindsight_r2_meta")
        assert ["u0"] == finished(leftover, "hindsight")  # u1 was half-copied
    finally:
        leftover.close()
    with HindsightMemory(
        MilvusBackend(uri), HashingEmbedder(64), owns_backend=True
    ) as memory:  # still on the old model: nothing switched
        expected = {
            ns: (
                len(memory.list_memories(ns, history=True)),
                len(memory.audit(ns)),
            )
            for ns in ("u0", "u1", "u2")
        }
    report = reembed(uri, to=HashingEmbedder(128))
    assert ["u0", "u1", "u2"] == report.namespaces
    with HindsightMemory(
        MilvusBackend(uri), HashingEmbedder(128), owns_backend=True
    ) as memory:
        copied = {
            ns: (
                len(memory.list_memories(ns, history=True)),
                len(memory.audit(ns)),
            )
            for ns in ("u0", "u1", "u2")
        }
    assert expected == copied
    assert sum(a for _, a in expected.values()) == report.audit


def test_leftovers_of_a_killed_run_to_another_model_are_replaced(
    tmp_path: Path,
) -> None:
    """A run to another model than the killed one's drops its leftovers, no mismatch."""
    uri = str(tmp_path / "store.db")
    fill(uri, namespaces=1)
    leftover = MilvusBackend(uri, prefix="hindsight_r2")
    leftover.setup(dim=32, model_id="some-other-model")
    leftover.close()
    report = reembed(uri, to=HashingEmbedder(128))
    with HindsightMemory(
        MilvusBackend(uri), HashingEmbedder(128), owns_backend=True
    ) as memory:
        assert 3 == len(memory.list_memories("u0"))
    assert "hindsight_r2" == report.new_prefix


def test_reembed_of_a_missing_store_is_a_value_error(tmp_path: Path) -> None:
    """Pointing reembed at a file with no store says so instead of copying nothing."""
    with pytest.raises(ValueError, match="no hindsight store"):
        reembed(str(tmp_path / "empty.db"), to=HashingEmbedder(128))
