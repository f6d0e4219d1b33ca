"""The capture worker's queue: one lane per tenant, served in turn.

A single FIFO made every turn wait for everything queued before it: one
tenant's 2,000-message backlog delayed another tenant's one-line turn by the
backlog's whole capture time. Here each lane (a namespace) is its own FIFO
and the worker takes lanes round-robin, one batch each. The lane served last
goes behind the others, and a lane that has just got work is not served
twice before it, so a tenant's turn waits for the batch running now plus at
most one batch of each other tenant with work queued. The worker cuts big
turns into batches of bounded size, which bounds "one batch".

An entry without a lane is a *barrier* (a job deferred with no namespace,
the worker's stop sentinel): it runs after everything queued before it, in
every lane, and everything queued after it waits for it. Barriers split the
queue into rounds; lanes are served in turn within the oldest round only.

Within a lane the order is the order of ``put``. Cost: ``put`` and ``get``
are O(1); ``remove`` and ``count`` walk what is queued.

The bound is per lane: ``maxsize`` entries queued in one lane (not the one
running), and as many barriers. ``put`` into a full lane waits for room in
that lane only, so a tenant that floods the queue waits for its own backlog
and never makes another tenant's ``put`` wait (one shared bound did: a
flood filled it, and every tenant's turn then waited for the worker to make
room). What may be queued in all is ``maxsize`` times the lanes with work.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Entry = Any
_END = object()


@dataclass(slots=True)
class _Round:
    """Lanes queued between two barriers, and the barrier that closes them."""

    lanes: OrderedDict[str, deque[Entry]] = field(default_factory=OrderedDict)
    barrier: Entry = None
    closed: bool = False


class Lanes:
    """Per-lane FIFOs served round-robin, with barriers; safe across threads.

    Args:
        maxsize: at most this many entries queued per lane (and this many
            barriers); ``put`` waits for room in its own lane. 0: no bound.

    Example:
        >>> q = Lanes()
        >>> for lane, n in [("big", 1), ("big", 2), ("big", 3), ("small", 1)]:
        ...     _ = q.put(f"{lane}{n}", lane)
        >>> [q.get()[1] for _ in range(4)]
        ['big1', 'small1', 'big2', 'big3']
    """

    def __init__(self, maxsize: int = 0) -> None:
        self.maxsize = maxsize
        self._rounds: deque[_Round] = deque([_Round()])
        self._queued: dict[str | None, int] = {}  # per lane; None: barriers
        self.unfinished = 0
        self._last: str | None = None
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)

    def put(self, entry: Entry, lane: str | None, *, wait: bool = True) -> bool:
        """Queue ``entry`` in ``lane`` (``None``: a barrier); ``False`` if full.

        Args:
            entry: what :meth:`get` hands back.
            lane: the tenant; ``None`` makes the entry a barrier.
            wait: wait for room when full (else return ``False`` at once).
        """
        with self._changed:
            while self.maxsize and self.queued(lane) >= self.maxsize:
                if not wait:
                    return False
                self._changed.wait()
            last = self._rounds[-1]
            if lane is None:
                last.barrier, last.closed = entry, True
                self._rounds.append(_Round())
            else:
                last.lanes.setdefault(lane, deque()).append(entry)
            self._queued[lane] = self.queued(lane) + 1
            self.unfinished += 1
            self._changed.notify_all()
        return True

    def get(self) -> tuple[str | None, Entry]:
        """Wait for the next entry; returns its lane (``None`` for a barrier) and it."""
        with self._changed:
            while True:
                found = self._next()
                if found is not None:
                    self._taken(found[0], 1)
                    self._changed.notify_all()
                    return found
                self._changed.wait()

    def _next(self) -> tuple[str | None, Entry] | None:
        first = self._rounds[0]
        if first.lanes:
            lane = next(iter(first.lanes))
            if lane == self._last and len(first.lanes) > 1:
                first.lanes.move_to_end(lane)  # it just had its turn
                lane = next(iter(first.lanes))
            self._last = lane
            return lane, self._pop(first, lane)
        if first.closed:  # everything before the barrier has been handed out
            self._rounds.popleft()
            return None, first.barrier
        return None

    @staticmethod
    def _pop(where: _Round, lane: str) -> Entry:
        entries = where.lanes[lane]
        entry = entries.popleft()
        if entries:
            where.lanes.move_to_end(lane)
        else:
            del where.lanes[lane]
        return entry

    def take_next(self, lane: str, fits: Callable[[Entry], bool]) -> Entry | None:
        """The lane's next entry if it is served now and ``fits``, else ``None``.

        Lets the worker add queued entries of one tenant to the batch it is
        about to run, without giving that tenant another turn.
        """
        with self._changed:
            first = self._rounds[0]
            entries = first.lanes.get(lane)
            if not entries or not fits(entries[0]):
                return None
            self._taken(lane, 1)
            self._changed.notify_all()
            return self._pop(first, lane)

    def queued(self, lane: str | None) -> int:
        """Entries queued in ``lane`` (``None``: barriers), not counting one running."""
        return self._queued.get(lane, 0)

    def _taken(self, lane: str | None, n: int) -> None:
        left = self.queued(lane) - n
        if left:
            self._queued[lane] = left
        else:
            self._queued.pop(lane, None)  # a lane per tenant ever seen would pile up

    def peek(self, n: int) -> list[Entry]:
        """Up to ``n`` entries that :meth:`get` serves next (lanes in turn), kept queued."""
        with self._lock:
            heads = [iter(q) for q in self._rounds[0].lanes.values()]
            out: list[Entry] = []
            while heads and len(out) < n:
                for head in list(heads):
                    entry = next(head, _END)
                    if entry is _END:
                        heads.remove(head)
                    elif len(out) < n:
                        out.append(entry)
            return out

    def done(self, n: int = 1) -> None:
        """Mark ``n`` entries handed out by :meth:`get` as finished."""
        with self._changed:
            self.unfinished -= n
            self._changed.notify_all()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every entry put was finished; ``False`` if ``timeout`` passed."""
        with self._changed:
            return self._changed.wait_for(lambda: self.unfinished == 0, timeout)

    def remove(self, unwanted: Callable[[Entry], bool]) -> int:
        """Drop queued entries (barriers never) for which ``unwanted`` is true."""
        with self._changed:
            dropped = 0
            for where in self._rounds:
                for lane in list(where.lanes):
                    kept = deque(e for e in where.lanes[lane] if not unwanted(e))
                    gone = len(where.lanes[lane]) - len(kept)
                    self._taken(lane, gone)
                    dropped += gone
                    if kept:
                        where.lanes[lane] = kept
                    else:
                        del where.lanes[lane]
            self.unfinished -= dropped
            if dropped:
                self._changed.notify_all()
            return dropped

    def count(self, wanted: Callable[[Entry], bool]) -> int:
        """How many queued entries (barriers included) ``wanted`` is true for."""
        with self._lock:
            lanes = sum(
                sum(1 for e in entries if wanted(e))
                for where in self._rounds
                for entries in where.lanes.values()
            )
            closed = (w.barrier for w in self._rounds if w.closed)
            return lanes + sum(1 for b in closed if wanted(b))
