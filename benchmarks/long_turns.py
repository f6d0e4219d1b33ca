"""Long turns: capture and submit() against the model alone, and where the time goes.

Turns of 1, 10 and 50 sentences (synthetic multi-paragraph chat text from
``_chat_text``, paragraphs of 2-6 sentences on family, travel, work, ...) are
captured into a fresh Milvus Lite file opened as ``from_uri`` opens one (capture
spool, group commit), tenants and threads in turn, three ways:

- ``capture``: one turn per :meth:`capture` call;
- ``batched``: ``--batch`` turns per call (a list of user messages);
- ``submit``: one :meth:`submit` per turn, timed until :meth:`flush` returns
  (acknowledged to durable and searchable).

Each is set against the model alone embedding the same sentences in the same
run, just before it: one call per turn (the reference of ``capture`` and
``submit``) and one call per ``--batch`` turns (the reference of ``batched``).
``ratio`` is capture's rate over the model's: 1.0 means capture costs what
embedding its sentences costs; the issue's bar is 0.8 with MiniLM. ``bound``
is the share of capture's time that its own model calls (the sentences plus
the whole turn and the question it answers, embedded for context) take when
replayed on the model alone after the run: near 1.0, capture is bound by the
model; the rest is ours.

The per-stage breakdown is wall time per turn: ``encode`` (split, classify,
entities, time, the language pipeline), ``embed`` (every model call capture
made), ``lookup`` (store reads of the merge / supersede candidate search, the
read cache included), ``write`` (store upserts, edges, audit, flush: the
commit round) and ``other`` (the rest: judging, staging, records, spool). For
``submit`` the stages run on the worker and committer threads and may overlap.
``calls`` are model calls and ``searches`` candidate searches per turn.

Run it from the repository root as a module (so this checkout is imported):

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python -m benchmarks.long_turns
    python -m benchmarks.long_turns --embedders hashing --sentences 400
    python -m benchmarks.long_turns --profile   # plus the top functions by time
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hindsight_lg.memory.capture.writer as writer_module
from benchmarks import _chat_text
from hindsight_lg import HindsightMemory
from hindsight_lg._text import split_events
from hindsight_lg.backends import ForwardingBackend, with_read_cache
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.embeddings import Embedder, embedder_from_name
from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.memory.policy import Policy

TENANTS = 4
LOOKUPS = {"search_dense", "search_dense_local", "search_lexical", "get"}
WRITES = {"upsert", "add_edges", "append_audit", "flush"}
SEARCHES = {"search_dense", "search_dense_local", "search_lexical"}


@dataclass
class Clock:
    """Seconds and calls per stage, shared by the timing wrappers."""

    seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - start
            self.calls[name] += 1

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


class TimedEmbedder:
    """The embedder, with its time and calls on the clock and each call's texts."""

    def __init__(self, inner: Embedder, clock: Clock) -> None:
        self.inner, self.clock = inner, clock
        self.dim, self.model_id = inner.dim, inner.model_id
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls.append(list(texts))
        with self.clock.stage("embed"):
            return self.inner.embed(texts)


class TimedBackend(ForwardingBackend):
    """Forwards to the store; candidate lookups and writes go on the clock.

    A :class:`ForwardingBackend`, so the optional features of the store below
    (the read cache's local search, its live check) stay visible to the
    engine's ``isinstance`` checks.
    """

    def __init__(self, inner: Any, clock: Clock) -> None:
        super().__init__(inner)
        self._clock = clock

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        stage = "lookup" if name in LOOKUPS else "write" if name in WRITES else None
        if stage is None:
            return super()._forward(name, *args, **kwargs)
        if name in SEARCHES:
            self._clock.calls["search"] += 1
        with self._clock.stage(stage):
            return super()._forward(name, *args, **kwargs)


@contextmanager
def timed_encode(clock: Clock) -> Iterator[None]:
    """Put the writer's language pipeline (``extract``) on the clock."""
    original = writer_module.extract

    def extract(*args: Any, **kwargs: Any) -> Any:
        with clock.stage("encode"):
            return original(*args, **kwargs)

    writer_module.extract = extract  # type: ignore[assignment]
    try:
        yield
    finally:
        writer_module.extract = original  # type: ignore[assignment]


@dataclass
class Row:
    """One embedder, turn size and mode."""

    embedder: str
    sentences: int
    mode: str
    turns: int
    seconds: float
    model_seconds: float
    replay_seconds: float
    stages: dict[str, float]
    model_calls: float
    searches: float

    @property
    def turns_per_s(self) -> float:
        return self.turns / self.seconds

    @property
    def ratio(self) -> float:
        """Capture's rate over the model's on the same sentences."""
        return self.model_seconds / self.seconds

    @property
    def bound(self) -> float:
        """The share of capture's time its own model calls take, replayed alone."""
        return self.replay_seconds / self.seconds


def model_seconds(embedder: Embedder, texts: list[str], per_call: int) -> float:
    """The model alone on the turns' sentences, ``per_call`` turns per call."""
    start = time.perf_counter()
    for i in range(0, len(texts), per_call):
        embedder.embed([s for t in texts[i : i + per_call] for s in split_events(t)])
    return time.perf_counter() - start


def replay_seconds(embedder: Embedder, calls: list[list[str]]) -> float:
    """The model alone making exactly the calls capture made."""
    start = time.perf_counter()
    for texts in calls:
        embedder.embed(texts)
    return time.perf_counter() - start


def open_memory(folder: Path, name: str, embedder: Embedder, clock: Clock) -> Any:
    """A fresh Lite store as ``from_uri`` opens one, with the clocks inside."""
    db = folder / name
    db.mkdir()
    raw = MilvusBackend(str(db / "memory.db"))
    backend = TimedBackend(with_read_cache(raw), clock)
    return HindsightMemory(
        backend,  # type: ignore[arg-type]
        TimedEmbedder(embedder, clock),  # type: ignore[arg-type]
        cache=False,
        spool=str(db / "memory.db.spool"),
        # Consolidation would run in the background mid-measurement.
        policy=Policy(consolidate_every=0),
    )


def where(i: int) -> dict[str, str]:
    return {"namespace": f"user{i % TENANTS}", "thread_id": f"thread{i % TENANTS}"}


def run_capture(memory: Any, texts: list[str], batch: int) -> None:
    for i, text in enumerate(texts):
        memory.capture(text, speaker="user", **where(i))
    memory.flush()


def run_batched(memory: Any, texts: list[str], batch: int) -> None:
    for call, start in enumerate(range(0, len(texts), batch)):
        messages = [
            {"role": "user", "content": t} for t in texts[start : start + batch]
        ]
        memory.capture(messages, **where(call))
    memory.flush()


def run_submit(memory: Any, texts: list[str], batch: int) -> None:
    for i, text in enumerate(texts):
        memory.submit(text, speaker="user", **where(i))
    memory.flush()


MODES: dict[str, tuple[Callable[[Any, list[str], int], None], bool]] = {
    "capture": (run_capture, False),
    "batched": (run_batched, True),
    "submit": (run_submit, False),
}


def measure(
    folder: Path,
    name: str,
    embedder: Embedder,
    size: int,
    count: int,
    batch: int,
    profile: cProfile.Profile | None,
) -> list[Row]:
    """Every mode for one embedder and turn size, each beside the model alone."""
    rows = []
    for mode, (run, batched) in MODES.items():
        texts = _chat_text.turns(count, size, seed=size * 100 + len(rows))
        clock = Clock()
        memory = open_memory(folder, f"{name}-{size}-{mode}", embedder, clock)
        try:
            memory.capture("Warm-up: I live in Berlin.", namespace="warm")
            memory.flush()
            alone = model_seconds(embedder, texts, batch if batched else 1)
            clock.reset()
            memory.embedder.calls.clear()
            with timed_encode(clock):
                if profile is not None:
                    profile.enable()
                start = time.perf_counter()
                run(memory, texts, batch)
                seconds = time.perf_counter() - start
                if profile is not None:
                    profile.disable()
            replayed = replay_seconds(embedder, memory.embedder.calls)
        finally:
            memory.close()
        stages = {k: v for k, v in clock.seconds.items()}
        stages["other"] = seconds - sum(stages.values())
        rows.append(
            Row(
                name,
                size,
                mode,
                count,
                seconds,
                alone,
                replayed,
                stages,
                clock.calls["embed"] / count,
                clock.calls["search"] / count,
            )
        )
        print(_line(rows[-1]), flush=True)
    return rows


HEADER = (
    f"{'embedder':<8} {'sent':>4} {'mode':<8} {'turns/s':>8} {'sent/s':>8} "
    f"{'model t/s':>9} {'ratio':>5} {'bound':>5} | ms/turn: {'encode':>7} "
    f"{'embed':>7} {'lookup':>7} {'write':>7} {'other':>7} | {'calls':>5} "
    f"{'searches':>8}"
)


def _line(row: Row) -> str:
    per = {k: 1000 * v / row.turns for k, v in row.stages.items()}
    return (
        f"{row.embedder:<8} {row.sentences:>4} {row.mode:<8} "
        f"{row.turns_per_s:>8.3g} {row.turns_per_s * row.sentences:>8.0f} "
        f"{row.turns / row.model_seconds:>9.3g} {row.ratio:>5.2f} "
        f"{row.bound:>5.2f} | ms/turn: "
        + " ".join(
            f"{per.get(k, 0.0):>7.1f}"
            for k in ("encode", "embed", "lookup", "write", "other")
        )
        + f" | {row.model_calls:>5.2f} {row.searches:>8.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--embedders", default="hashing,minilm")
    parser.add_argument("--sizes", default="1,10,50", help="sentences per turn")
    parser.add_argument(
        "--sentences",
        type=int,
        default=0,
        help="sentences per mode (turns = this / size; default 1500 hashing, "
        "400 MiniLM)",
    )
    parser.add_argument("--batch", type=int, default=10, help="turns per call")
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    profile = cProfile.Profile() if args.profile else None
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="hindsight-long-") as tmp:
        for name in args.embedders.split(","):
            embedder = embedder_from_name(name)
            budget = args.sentences or (1500 if name.startswith("hashing") else 400)
            for size in (int(s) for s in args.sizes.split(",")):
                count = max(args.batch, budget // size)
                measure(Path(tmp), name, embedder, size, count, args.batch, profile)
    if profile is not None:
        pstats.Stats(profile, stream=sys.stdout).sort_stats("cumulative").print_stats(
            40
        )


if __name__ == "__main__":
    main()
