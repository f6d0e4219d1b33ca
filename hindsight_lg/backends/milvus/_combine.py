"""Combined writes: concurrent writes to one collection share one server call.

A Milvus server answers one upsert of 16 rows in about the time of one of a
single row, and 16 single-row upserts one after another in 15-30 times as
long: each call pays a round trip and the server's fixed cost per request.
The group commit writes a batch of captures tenant by tenant (records, then
edges, then the audit trail of each), so a round over many tenants was many
calls. It now writes the tenants at once, from several threads, and this
combiner turns their writes into a few calls.

Algorithm (group commit by leader, per collection and call kind): a write
joins its collection's queue. If no call for that queue is in flight, the
writer leads: it takes the queue's head (every queued write whose primary
keys do not repeat one taken before it, up to :data:`MAX_ROWS` rows), sends
it as one call, wakes the writers it carried, and hands the lead to the
first writer still queued, who does the same. Writes that arrive while a
call is in flight therefore go together in the next one.

Guarantees: a write returns only once the server acknowledged its rows (as
an uncombined write does), so whoever writes through it (the read cache,
then its own stamp) sees the same order as before. Writes of one thread keep
their order. Two writes of the same row never share a call (the server
keeps one of two rows with one key in a call, not necessarily the later),
so the later one wins as it would alone. A failed combined call is retried
write by write, so a write the server refuses fails alone, and one tenant's
bad row never fails another tenant's write; an outage fails every write of
the call at once, as it would have one by one.

Cost: a lone write pays nothing but a lock; a write behind a call in flight
waits for that call, then rides the next.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from hindsight_lg.errors import StoreTimeout, StoreUnavailable

#: Rows one combined call carries at most (a gRPC message stays far below
#: its limit: a record row is a few KB).
MAX_ROWS = 4096

Rows = list[dict[str, Any]]
Send = Callable[[Rows], object]


@dataclass(slots=True)
class _Write:
    rows: Rows
    send: Send
    woken: threading.Event = field(default_factory=threading.Event)
    done: bool = False
    error: BaseException | None = None


class WriteCombiner:
    """Combines concurrent writes per key (a call kind and a collection)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[object, deque[_Write]] = {}

    def write(self, key: object, rows: Rows, send: Send) -> None:
        """Write ``rows`` with ``send``, in one call with other writes of ``key``.

        Raises:
            Exception: what ``send`` raised for these rows.
        """
        me = _Write(rows, send)
        with self._lock:
            queue = self._queues.setdefault(key, deque())
            queue.append(me)
            lead = len(queue) == 1  # nothing in flight: nobody else will send it
        while True:
            if lead:
                self._send_head(key)
            me.woken.wait()
            if me.done:
                break
            me.woken.clear()  # handed the lead: send the next call
            lead = True
        if me.error is not None:
            raise me.error

    def _send_head(self, key: object) -> None:
        with self._lock:
            batch = _head(self._queues[key])
        try:
            _send(batch)
        except BaseException as exc:  # interrupted: nobody carried may think it wrote
            for w in batch:
                w.error = w.error or exc
            raise
        finally:
            with self._lock:
                queue = self._queues[key]
                for _ in batch:
                    queue.popleft()
                nxt = queue[0] if queue else None
                if nxt is None:
                    del self._queues[key]
            for w in batch:
                w.done = True
                w.woken.set()
            if nxt is not None:
                nxt.woken.set()  # not done: it leads the next call


def _head(queue: deque[_Write]) -> list[_Write]:
    """The writes at the head of ``queue`` that may share a call."""
    batch: list[_Write] = []
    keys: set[object] = set()
    rows = 0
    for w in queue:
        mine = {r.get("pk") for r in w.rows}
        if batch and (not keys.isdisjoint(mine) or rows + len(w.rows) > MAX_ROWS):
            break
        batch.append(w)
        keys |= mine
        rows += len(w.rows)
    return batch


def _send(batch: list[_Write]) -> None:
    """One call for ``batch``; on a refusal, one call per write (see module notes)."""
    if len(batch) == 1:
        _send_one(batch[0])
        return
    try:
        batch[0].send([r for w in batch for r in w.rows])
    except (StoreUnavailable, StoreTimeout) as exc:
        for w in batch:
            w.error = exc
    except Exception:
        for w in batch:
            _send_one(w)


def _send_one(w: _Write) -> None:
    try:
        w.send(w.rows)
    except Exception as exc:  # raised in the writer's own thread
        w.error = exc
