"""Long turns cost one model call, and store calls that do not grow with sentences."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import ForwardingBackend, InMemoryBackend, Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.embeddings import HashingEmbedder
from hindsight_lg.embeddings.base import Vectors

NAMES = "Maya Tom Aiko Ravi Sofia Jonas Mei Omar Clara Priya".split()
PLACES = "Berlin Lisbon Paris Kyoto Austin Oslo Lima Seoul Cairo Porto".split()
HOBBIES = "pottery chess kayaking yoga gardening salsa jazz knitting".split()
TEMPLATES = (
    "My friend {n} moved to {p} last spring.",
    "I spent the weekend in {p} with {n}.",
    "{n} has been learning {h} since the summer.",
    "We are planning a trip to {p} for {n}'s birthday.",
    "I really like {h} on quiet Sunday mornings.",
)


def long_turn(sentences: int, seed: int) -> str:
    """A multi-paragraph user turn of ``sentences`` distinct sentences."""
    rng = random.Random(seed)
    said: set[str] = set()
    out = []
    while len(out) < sentences:
        text = rng.choice(TEMPLATES).format(
            n=rng.choice(NAMES), p=rng.choice(PLACES), h=rng.choice(HOBBIES)
        )
        if text not in said:
            said.add(text)
            out.append(text + ("\n\n" if len(out) % 5 == 4 else " "))
    return "".join(out).strip()


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting its calls and the texts of each."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(len(texts))
        return super().embed(texts)


class CountingStore(ForwardingBackend):
    """The store as the engine's read cache sees it, counting each call by name."""

    def __init__(self, inner: Any) -> None:
        super().__init__(inner)
        self.calls: Counter[str] = Counter()

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        self.calls[name] += 1
        return super()._forward(name, *args, **kwargs)


def capture_counts(folder: Path, sentences: int) -> tuple[list[int], Counter[str]]:
    """Model calls and store calls of capturing one turn of ``sentences`` on Lite."""
    embedder = CountingEmbedder()
    store = CountingStore(MilvusBackend(str(folder / f"m{sentences}.db")))
    spool = str(folder / f"m{sentences}.db.spool")
    with HindsightMemory(store, embedder, spool=spool) as memory:  # type: ignore[arg-type]
        memory.capture("I live in Berlin.", namespace="warm")
        memory.flush()
        embedder.calls.clear()
        store.calls.clear()
        written = memory.capture(
            long_turn(sentences, seed=sentences), namespace="u1", thread_id="t1"
        )
        memory.flush()
        assert len(written) >= sentences // 2  # the turn became memories
        return embedder.calls, store.calls


def test_a_fifty_sentence_turn_is_one_model_call(tmp_path: Path) -> None:
    """Every sentence of a long turn, and the turn itself, go to the model at once."""
    calls, _ = capture_counts(tmp_path, 50)
    assert len(calls) == 1
    assert 50 <= calls[0] <= 52  # the sentences, the turn, at most one question


def test_store_calls_of_a_long_turn_do_not_grow_per_sentence(tmp_path: Path) -> None:
    """Candidate searches stay off the store and writes go in one round.

    The read cache answers the merge / supersede candidate searches of every
    event; what reaches the store is one upsert, one edge write and the audit
    trail, however many sentences the turn has. (Reading a merged record's
    vector back is the one call that may grow with what merges.)
    """
    _, one = capture_counts(tmp_path, 1)
    _, fifty = capture_counts(tmp_path, 50)
    # What reaches the store to read: the tenant's load into the read cache,
    # by the capture or the prefetch racing it; a load a commit overlaps is
    # redone, and a search meanwhile reads the store. Bounded by the cache's
    # attempts, not by the sentences.
    from hindsight_lg.backends.cached import _LOAD_ATTEMPTS

    for s in ("search_dense", "search_lexical", "query"):
        assert fifty[s] <= _LOAD_ATTEMPTS and one[s] <= _LOAD_ATTEMPTS, s
    writes = ("upsert", "append_audit", "flush")
    assert [fifty[s] for s in writes] == [one[s] for s in writes]
    assert fifty["add_edges"] <= 1


class SlowEmbedder(CountingEmbedder):
    """Costs per text what a small model costs on a CPU core, and counts calls."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        time.sleep(0.004 * len(texts))
        return super().embed(texts)


def stored_vectors(memory: HindsightMemory, namespaces: Sequence[str]) -> set[Any]:
    return {
        (r.content, tuple(r.dense))
        for ns in namespaces
        for r in memory.backend.query(ns, Where(), vectors=True)
    }


def test_queued_captures_share_one_model_call() -> None:
    """Turns waiting in the worker's queue embed together, to the same vectors."""
    turns = [long_turn(1 + i % 3, seed=i) for i in range(12)]
    namespaces = [f"u{i % 3}" for i in range(12)]
    embedder = SlowEmbedder()
    with HindsightMemory(InMemoryBackend(), embedder) as memory:
        memory.capture("I live in Berlin.", namespace="warm")  # the model's cost
        gate = threading.Event()
        memory.worker.defer(gate.wait)  # the turns queue up behind it
        for text, ns in zip(turns, namespaces, strict=True):
            memory.submit(text, namespace=ns, thread_id="t", speaker="user")
        embedder.calls.clear()
        gate.set()
        memory.flush()
        assert len(embedder.calls) <= 2  # not one per turn
        queued = stored_vectors(memory, sorted(set(namespaces)))
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as alone:
        for text, ns in zip(turns, namespaces, strict=True):
            alone.capture(text, namespace=ns, thread_id="t", speaker="user")
        assert queued == stored_vectors(alone, sorted(set(namespaces)))


def test_a_short_turn_is_one_model_call_of_one_text(tmp_path: Path) -> None:
    """capture() of one sentence embeds that sentence once, its restatement too.

    The near-duplicate and conflict search uses the event's own vector: no
    query embedding on top of the memory's.
    """
    embedder = CountingEmbedder()
    spool = str(tmp_path / "m.db.spool")
    store = MilvusBackend(str(tmp_path / "m.db"))
    with HindsightMemory(store, embedder, spool=spool) as memory:
        memory.capture("I live in Berlin.", namespace="warm")
        embedder.calls.clear()
        first = memory.capture("My sister Mei plays the cello.", namespace="u1")
        again = memory.capture("My sister Mei plays the cello.", namespace="u1")
        memory.flush()
        assert embedder.calls == [1, 1]
        assert [r.id for r in again] == [r.id for r in first]  # merged, not re-added


def test_a_batch_of_turns_is_one_model_call_of_its_distinct_texts(
    tmp_path: Path,
) -> None:
    """capture() of 20 one-sentence turns: one call, each distinct sentence once."""
    embedder = CountingEmbedder()
    spool = str(tmp_path / "m.db.spool")
    store = MilvusBackend(str(tmp_path / "m.db"))
    sentences = [long_turn(1, seed=i) for i in range(40)]
    turns = list(dict.fromkeys(sentences))[:19]
    turns.append(turns[3])  # said twice in one batch: embedded once
    with HindsightMemory(store, embedder, spool=spool) as memory:
        memory.capture("I live in Berlin.", namespace="warm")
        embedder.calls.clear()
        memory.capture([{"role": "user", "content": t} for t in turns], namespace="u1")
        memory.flush()
        assert embedder.calls == [19]
