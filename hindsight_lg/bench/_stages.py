"""Where capture's time goes: the stage breakdown of the scale benches.

Each capture mode (``capture()`` one turn per call, batched, ``submit()``) is
timed as a whole, and its parts where they happen:

- **embed**: every model call (the bench's embedder is wrapped), any thread;
- **reads**: store reads on the capture's own thread (the caller's, or the
  worker's for ``submit()``): the near-duplicate and conflict search, which
  loads or checks its tenant in the read cache (on a server: the write
  stamps, the records and the edges, one round trip each), and the reads of
  the records an event merges into;
- **write**: store writes on the capture's thread (a flush waiting for the
  last commit round, a drain before a read);
- **wait**: ``submit()`` only: the caller's final ``flush()``, waiting for
  the worker's last captures and the last commit round;
- **encode**: the rest: split, classify, judge, place, spool (the wall time
  minus the four above);
- **commit**: store writes of the commit rounds on the committer's threads,
  behind the captures (it overlaps them; at 100% of the wall time the rounds
  cannot keep up and set the pace);
- **ahead**: tenant loads on the prefetch threads, behind the captures.

``limit`` names the stage that sets the pace: the committer when its writes
fill the wall time, else the largest stage on the capture's thread.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from hindsight_lg.embeddings import embed_queries

#: Store calls that read, and that write (the protocol's names).
READS = frozenset(
    "get query search_dense search_dense_local search_lexical edges all_edges "
    "count audit write_stamps namespaces".split()
)
WRITES = frozenset(
    "upsert add_edges append_audit delete delete_edges purge_audit flush".split()
)
# Threads that work behind the captures, by name prefix.
_BEHIND = {"hindsight-commit": "commit", "hindsight-prefetch": "ahead"}
#: The stages of a row, in print order.
STAGES = ("embed", "reads", "write", "encode", "wait", "commit", "ahead")
# The committer sets the pace once its writes fill this share of the wall time.
_SATURATED = 0.8


class StageClock:
    """Wall seconds per stage, from any thread.

    A stage's time is the wall time during which at least one of its blocks
    ran: the commit writes a round's tenants from many threads at once, and
    their summed time would say more than the wall time it took.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._lock = threading.Lock()
        self._running: dict[str, int] = defaultdict(int)
        self._since: dict[str, float] = {}

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        """Count the block's wall time in ``stage`` (or the thread's, if behind)."""
        name = threading.current_thread().name
        behind = next((s for p, s in _BEHIND.items() if name.startswith(p)), None)
        key = stage if behind is None or stage == "embed" else behind
        with self._lock:
            self._running[key] += 1
            if self._running[key] == 1:
                self._since[key] = time.perf_counter()
        try:
            yield
        finally:
            with self._lock:
                self._running[key] -= 1
                if self._running[key] == 0:
                    self.seconds[key] += time.perf_counter() - self._since.pop(key)

    def store_call(self, name: str) -> str | None:
        """The stage a store call named ``name`` counts in, if any."""
        if name in READS:
            return "reads"
        return "write" if name in WRITES else None

    def reset(self) -> None:
        """Start again from zero (blocks running now count from now)."""
        with self._lock:
            self.seconds.clear()
            now = time.perf_counter()
            for key in self._since:
                self._since[key] = now


class ClockedEmbedder:
    """An embedder (the :class:`~hindsight_lg.embeddings.Embedder` protocol) on the clock."""

    def __init__(self, inner: Any, clock: StageClock) -> None:
        self.inner = inner
        self.clock = clock
        self.model_id: str = inner.model_id
        self.dim: int = inner.dim

    def embed(self, texts: Sequence[str]) -> Any:
        with self.clock.timed("embed"):
            return self.inner.embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Any:
        with self.clock.timed("embed"):
            return embed_queries(self.inner, texts)


@dataclass(frozen=True, slots=True)
class Stages:
    """One capture mode's wall time and stages (ms per turn), and what limits it."""

    turns: int
    wall_s: float
    ms: dict[str, float]

    @classmethod
    def of(
        cls, clock: StageClock, turns: int, wall_s: float, wait_s: float = 0.0
    ) -> Stages:
        """The clock's stages over ``turns`` captured in ``wall_s`` seconds.

        ``wait_s``: of the wall time, the caller's final wait (``flush()``).
        """
        s = dict(clock.seconds)
        # The caller's writes happen inside its flush: count them once.
        s["wait"] = max(0.0, wait_s - s.get("write", 0.0))
        path = sum(s.get(k, 0.0) for k in ("embed", "reads", "write", "wait"))
        s["encode"] = max(0.0, wall_s - path)
        per = {k: 1000 * s.get(k, 0.0) / max(turns, 1) for k in STAGES}
        return cls(turns, wall_s, per)

    @property
    def limit(self) -> str:
        """The stage that sets the pace (see the module notes)."""
        wall_ms = 1000 * self.wall_s / max(self.turns, 1)
        if self.ms["commit"] >= _SATURATED * wall_ms:
            return "commit"
        path = ("embed", "reads", "write", "encode", "wait")
        return max(path, key=lambda k: self.ms[k])

    def share(self, stage: str) -> float:
        """``stage``'s time over the wall time (behind stages may pass 1)."""
        return self.ms[stage] * self.turns / 1000 / max(self.wall_s, 1e-9)
