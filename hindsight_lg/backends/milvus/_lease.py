"""Leases on a Milvus server: mutual exclusion without a conditional write.

Milvus has no compare-and-set, and an upsert followed by a read-back is not a
lock (two writers can each read their own row back before the other's lands).
A lease here is Lamport's bakery algorithm over rows of ``<prefix>_meta``:

1. a contender writes a ``choosing`` ticket, reads the live tickets of the
   resource and writes its number as one more than the largest it saw;
2. it holds the lease once no ticket is ``choosing`` and its (number, owner)
   is the smallest live ticket;
3. release deletes its ticket.

The algorithm needs only that a read sees every write acknowledged before it
started, which ``consistency_level="Strong"`` gives (each write takes a
timestamp from the server's oracle; a Strong read waits until all writes
before its own timestamp are visible). It does not need synchronised clocks
for safety while every holder is alive.

Limits, by design: tickets expire after ``ttl`` seconds so a crashed process
cannot block a resource forever. A holder paused longer than ``ttl`` (a GC
stop, a suspended VM) or a clock skew between machines larger than the margin
can let a second holder in; keep critical sections far shorter than ``ttl``.
Each acquisition costs four to six round trips, so leases guard rare writes
(compare-and-swap updates, consolidation), not the capture path.

Example:
    >>> leases = MilvusLeases(backend)  # doctest: +SKIP
    >>> with leases.hold("u42", "consolidate"):  # doctest: +SKIP
    ...     ...
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hindsight_lg.backends.milvus._expr import lit
from hindsight_lg.errors import StoreTimeout

if TYPE_CHECKING:
    from hindsight_lg.backends.milvus.backend import MilvusBackend


@dataclass(frozen=True)
class Ticket:
    """One contender's row: its number, whether it is still choosing, its expiry."""

    owner: str
    number: int
    choosing: bool
    expires: float

    def before(self, other: Ticket) -> bool:
        """True when this ticket is served before ``other``."""
        return (self.number, self.owner) < (other.number, other.owner)


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()


class MilvusLeases:
    """Expiring leases on (namespace, resource) pairs, kept in a server's meta collection.

    Args:
        backend: a set-up :class:`MilvusBackend` on a Milvus server.
        ttl: seconds a ticket lives without renewal (the longest critical section).
        poll: seconds between checks while waiting.
        clock: wall-clock time; tickets of other processes expire by it.
    """

    def __init__(
        self,
        backend: MilvusBackend,
        *,
        ttl: float = 30.0,
        poll: float = 0.01,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.ttl = ttl
        self.poll = poll
        self.clock = clock
        self._table = backend._name("meta")

    @contextmanager
    def hold(
        self, namespace: str, resource: str, *, timeout: float = 60.0
    ) -> Iterator[None]:
        """Hold the lease on ``resource`` of ``namespace`` for the ``with`` block.

        Raises:
            StoreTimeout: another holder kept it for ``timeout`` seconds.
        """
        key = "lease:" + _digest(namespace, resource)
        owner = uuid.uuid4().hex
        try:
            self._acquire(key, owner, timeout)
            yield
        finally:
            self._release(key, owner)

    def _acquire(self, key: str, owner: str, timeout: float) -> None:
        self._write(key, owner, 0, choosing=True)
        number = 1 + max((t.number for t in self._live(key)), default=0)
        mine = self._write(key, owner, number, choosing=False)
        deadline = time.monotonic() + timeout
        while not self._first(mine, self._live(key)):
            if time.monotonic() > deadline:
                raise StoreTimeout(
                    f"lease {key} is held elsewhere after {timeout:.0f}s; "
                    "retry, or wait for the holder's ticket to expire"
                )
            time.sleep(self.poll)

    @staticmethod
    def _first(mine: Ticket, tickets: list[Ticket]) -> bool:
        others = [t for t in tickets if t.owner != mine.owner]
        if any(t.choosing for t in others):
            return False
        return all(mine.before(t) for t in others if t.number > 0)

    def _write(self, key: str, owner: str, number: int, *, choosing: bool) -> Ticket:
        ticket = Ticket(owner, number, choosing, self.clock() + self.ttl)
        row = {
            "pk": _digest(key, owner),
            "namespace": key,
            "at": ticket.expires,
            "doc": {"owner": owner, "number": number, "choosing": choosing},
            "stub": [0.0, 0.0],
        }
        b = self.backend
        b._call("writing lease", b._client.upsert, self._table, [row])
        return ticket

    def _live(self, key: str) -> list[Ticket]:
        b = self.backend
        rows: list[dict[str, Any]] = b._call(
            "reading leases",
            b._client.query,
            self._table,
            filter=f"namespace == {lit(key)}",
            output_fields=["doc", "at"],
        )
        now = self.clock()
        return [
            Ticket(
                r["doc"]["owner"],
                int(r["doc"]["number"]),
                bool(r["doc"]["choosing"]),
                float(r["at"]),
            )
            for r in rows
            if float(r["at"]) > now
        ]

    def _release(self, key: str, owner: str) -> None:
        b = self.backend
        b._call(
            "releasing lease", b._client.delete, self._table, ids=[_digest(key, owner)]
        )
