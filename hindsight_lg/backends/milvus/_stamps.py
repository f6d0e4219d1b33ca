"""Write stamps: how a read cache on one replica learns another replica wrote.

A read cache in front of a Milvus server (``backends.cached``) serves a
tenant's records, postings and edges in-process. Other processes write the
same tenants, so the cache must learn of their writes without reloading the
tenant on every recall. Each backend object (one per process and store)
keeps one counter per namespace it wrote, as a row of ``<prefix>_meta``:
``(writer, namespace) -> n``. A cache reads a namespace's rows (one small
query), and if no other writer's counter moved since it loaded the tenant,
what it holds is what the store holds.

Order, so that a stamp is never seen before what it stands for:

- a writer bumps its counter only after its write was acknowledged; a
  deletion's stamp waits until the server serves the deletion (see
  ``MilvusCore._served``) and is written before ``delete`` returns, so a
  memory forgotten on one replica is gone from every cache's next check;
- upserts' stamps are written by one background thread, coalesced: a write
  path pays no extra round trip, and other caches see the write after the
  next stamp write (milliseconds) plus the server's visibility of about one
  time tick;
- a cache reads stamps before it loads a tenant, so a write landing between
  the two costs one extra reload, never a stale cache.

Counters only grow in one process (one thread writes them, the current
value each time), and a cache compares them for equality, so any change,
including a row deleted by hand, makes it reload.

A process that stops between a write and its stamp leaves no stamp: caches
reload every tenant after their backstop (``CachedBackend.max_age_s``) anyway.

Rows of writers gone for :data:`PRUNE_S` (a week) are deleted by the next
writer to start: every cache reloaded since such a row last moved (caches
reload within ``max_age_s``, which must stay below it), so a row's removal
can only make a cache reload once, never hide a write from it.
"""

from __future__ import annotations

import hashlib
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.backends.milvus._expr import lit
from hindsight_lg.backends.optional import STAMPS_PRUNE_S

#: Seconds the stamp thread waits after a failed write before it retries.
RETRY_S = 1.0
#: Seconds after its last write that a writer's stamp rows may be deleted.
PRUNE_S = STAMPS_PRUNE_S
_PREFIX = "stamp:"


def stamp_key(namespace: str) -> str:
    """The ``namespace`` field of a namespace's stamp rows (fixed length)."""
    return _PREFIX + hashlib.sha1(namespace.encode()).hexdigest()


class Stamper:
    """One writer's counters, and the reads of every writer's (see module notes).

    Args:
        table: the meta collection's name.
        call: the backend's ``_call(action, fn, *args, **kwargs)``.
        client: returns the connected ``MilvusClient``.
        read_level: the consistency a read uses now (``Session`` or ``Strong``).
    """

    def __init__(
        self,
        table: Callable[[], str],
        call: Callable[..., Any],
        client: Callable[[], Any],
        read_level: Callable[[], str],
    ) -> None:
        self.writer = uuid.uuid4().hex[:16]
        self._table = table
        self._call = call
        self._client = client
        self._read_level = read_level
        self._counts: dict[str, int] = {}
        self._pending: set[str] = set()
        self._cond = threading.Condition()
        self._flushing = threading.Lock()  # one writer of rows: counters never go back
        self._thread: threading.Thread | None = None
        self._closed = False

    def wrote(self, namespace: str, *, wait: bool = False) -> None:
        """Count a write to ``namespace``; ``wait``: its stamp is stored on return."""
        with self._cond:
            self._counts[namespace] = self._counts.get(namespace, 0) + 1
            self._pending.add(namespace)
            if not wait:
                self._start()
                self._cond.notify()
        if wait:
            self.flush()

    def flush(self) -> None:
        """Store every pending stamp now (raises what the server raised)."""
        with self._flushing:
            with self._cond:
                batch = {ns: self._counts[ns] for ns in self._pending}
                self._pending.clear()
            if not batch:
                return
            try:
                self._write(batch)
            except Exception:
                with self._cond:
                    self._pending.update(batch)
                raise

    def read(self, namespace: str) -> dict[str, int]:
        """Every other writer's counter for ``namespace`` (this one's left out)."""
        rows: list[dict[str, Any]] = self._call(
            "reading write stamps",
            self._client().query,
            self._table(),
            filter=f"namespace == {lit(stamp_key(namespace))}",
            output_fields=["doc"],
            consistency_level=self._read_level(),
        )
        found = {str(r["doc"]["writer"]): int(r["doc"]["n"]) for r in rows}
        found.pop(self.writer, None)
        return found

    def close(self) -> None:
        """Store what is pending and stop the thread."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        thread = self._thread
        if thread is not None:
            thread.join(timeout=5.0)
        try:
            self.flush()
        except Exception as exc:  # closing must not raise over a lost stamp
            telemetry.get_logger().warning("write_stamps_lost", error=str(exc))

    # -- the background writer ---------------------------------------------

    def _start(self) -> None:
        if self._thread is None and not self._closed:
            self._thread = threading.Thread(
                target=self._run, name="hindsight-stamps", daemon=True
            )
            self._thread.start()

    def prune(self, now: float | None = None) -> None:
        """Delete every writer's stamp rows last written over :data:`PRUNE_S` ago."""
        before = (time.time() if now is None else now) - PRUNE_S
        self._call(
            "pruning write stamps",
            self._client().delete,
            self._table(),
            filter=f'namespace like "{_PREFIX}%" and at < {before!r}',
        )

    def _run(self) -> None:
        try:  # once per writer: rows of writers long gone (see module notes)
            self.prune()
        except Exception as exc:
            telemetry.get_logger().warning("write_stamps_prune_failed", error=str(exc))
        while True:
            with self._cond:
                while not self._pending and not self._closed:
                    self._cond.wait()
                if self._closed:
                    return
            try:
                self.flush()
            except Exception as exc:
                telemetry.get_logger().warning(
                    "write_stamps_failed", error=str(exc), retry_s=RETRY_S
                )
                time.sleep(RETRY_S)

    def _write(self, batch: dict[str, int]) -> None:
        now = time.time()
        rows = [
            {
                "pk": hashlib.sha1(f"{self.writer}\x1f{ns}".encode()).hexdigest(),
                "namespace": stamp_key(ns),
                "at": now,
                "doc": {"writer": self.writer, "n": n},
                "stub": [0.0, 0.0],
            }
            for ns, n in batch.items()
        ]
        self._call("writing write stamps", self._client().upsert, self._table(), rows)
