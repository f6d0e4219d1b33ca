"""Background capture: bounded per-tenant lanes drained by one daemon thread.

Capture runs the whole write pipeline (extraction, embedding, dedupe, conflict
checks), which takes milliseconds to seconds. Agents must not wait for it, so
nodes, middleware and the bridging checkpointer hand a turn to
:class:`CaptureWorker` and go on. A queue item is a plain dict of
:meth:`~hindsight_lg.memory.engine.HindsightMemory.capture` keyword arguments
(messages already turned into plain dicts), so it can be written to disk as
JSON by a durable spool.

The worker also keeps the set of message ids already handed to capture
("claims"): the capture node, the middleware and the checkpointer share it,
so a message reaches long-term memory once however many of them see it.

Fair across tenants: each namespace has its own lane and the thread serves
lanes in turn, one batch each (:mod:`.lanes`). A turn longer than
``max_messages`` messages is cut at submit into captures of at most that many
(spooled together, with one ``fsync``), and a batch never grows past it. So a
tenant's turn waits for the batch running now plus at most one batch of each
other tenant with work queued, never for another tenant's whole backlog.
The bound is per tenant too: ``maxsize`` captures queued in a tenant's lane.
A ``submit`` into a full lane waits until the worker takes one of that
tenant's captures (back-pressure on the tenant that floods, with its turns
already spooled); other tenants' ``submit`` calls never wait for it.
Cutting a turn costs its later parts one thing only: without a ``thread_id``,
an answer at the start of a part no longer sees the question that ended the
part before it (with one, the writer keeps the thread's last turn anyway).

Other writes that must not block a turn (reflection's reinforce / weaken /
lesson) are queued as jobs with :meth:`CaptureWorker.defer`: a job for a
namespace runs after that namespace's captures submitted before it; a job
without one runs after everything submitted before it. ``flush()`` waits for
them too.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace

from hindsight_lg import telemetry
from hindsight_lg._messages import message_key
from hindsight_lg.memory.durability.commit import at_exit
from hindsight_lg.memory.durability.lanes import Lanes
from hindsight_lg.memory.requests import message_keys
from hindsight_lg.telemetry import parent_span

CaptureFn = Callable[..., Any]
#: Makes queue items durable before they are queued (all or none); returns them.
Accept = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
_STOP = object()


def _log(level: str, event: str, **fields: Any) -> None:
    """Log without ever raising: a broken log sink must not kill the worker."""
    try:
        getattr(telemetry.get_logger(), level)(event, **fields)
    except Exception:  # nothing better to do with a failing logger
        pass


class CaptureWorker:
    """Runs captures on a daemon thread behind a bounded queue.

    Args:
        capture: called as ``capture(**item)`` for every queued item.
        maxsize: captures (and jobs) queued per tenant; a tenant whose lane
            is full waits in :meth:`submit` until the worker takes one of
            its captures (back-pressure beats dropping turns that were
            acknowledged). Other tenants' lanes have their own room.
        max_claims: how many message ids to remember for de-duplication.
        max_batch: at most this many queued message captures with the same
            target are written in one capture call.
        max_messages: a turn with more messages is cut into captures of at
            most this many, and a batch holds at most this many: the unit of
            fairness between tenants.
        on_accept: makes items durable (all or none) before they are
            queued, so "accepted" means "survives a crash" (an engine with
            a spool).
        ahead: given the captures about to run and those queued behind
            them, embeds their texts in one model call (capture.ahead).

    Example:
        >>> seen = []
        >>> worker = CaptureWorker(lambda **item: seen.append(item["namespace"]))
        >>> worker.submit({"messages_or_text": "I like tea", "namespace": "u1"})
        True
        >>> worker.flush()
        True
        >>> seen
        ['u1']
        >>> worker.close()
    """

    def __init__(
        self,
        capture: CaptureFn,
        *,
        maxsize: int = 1024,
        max_claims: int = 200_000,
        max_batch: int = 64,
        max_messages: int = 64,
        on_accept: Accept | None = None,
        ahead: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> None:
        if max_messages < 1:
            raise ValueError(f"max_messages must be at least 1, not {max_messages}")
        self._capture = capture
        self._queue = Lanes(maxsize)
        self._claims: OrderedDict[tuple[str, str], None] = OrderedDict()
        self._max_claims = max_claims
        self.max_batch = max_batch
        self.max_messages = max_messages
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._closed = False
        self.errors = 0
        self.done = 0
        self.on_accept = on_accept
        self.ahead = ahead
        self._planned: set[int] = set()
        self._full: set[str | None] = set()  # lanes found full, logged once

    # -- de-duplication ------------------------------------------------------

    def claim(self, namespace: str, keys: Sequence[str]) -> list[str]:
        """Mark message keys of ``namespace`` as captured; return those that were new."""
        fresh: list[str] = []
        with self._lock:
            for key in keys:
                if (namespace, key) in self._claims:
                    continue
                self._claims[(namespace, key)] = None
                fresh.append(key)
            while len(self._claims) > self._max_claims:
                self._claims.popitem(last=False)
        return fresh

    def claim_messages(self, namespace: str, messages: Sequence[Any]) -> list[str]:
        """Mark ``messages`` of ``namespace`` as captured, by the keys a capture
        claims them by (:func:`~hindsight_lg.memory.requests.message_keys`);
        return the keys that were new."""
        return self.claim(namespace, message_keys(messages))

    def is_claimed(self, namespace: str, key: str) -> bool:
        """Whether a message key was already handed to capture."""
        with self._lock:
            return (namespace, key) in self._claims

    def submit_new(self, item: dict[str, Any]) -> list[dict[str, Any]]:
        """Queue only the messages of ``item`` not claimed yet; returns them."""
        messages = item["messages_or_text"]
        keys = [message_key(m) for m in messages]
        fresh = set(self.claim(item["namespace"], keys))
        new = [m for m, k in zip(messages, keys, strict=True) if k in fresh]
        if new:
            self.submit({**item, "messages_or_text": new})
        return new

    # -- the queue -------------------------------------------------------------

    def defer(self, job: Callable[[], Any], namespace: str | None = None) -> None:
        """Queue a job to run on the worker.

        Jobs are not spooled: a crash loses them, which suits work that is
        useful but not owed to anyone (reflection).

        Args:
            job: called with no arguments on the worker thread.
            namespace: the tenant the job is about: it runs after that
                tenant's captures queued before it, in its lane. ``None``:
                after everything queued before it, and before anything
                queued after it.

        Raises:
            RuntimeError: the worker was closed.
        """
        if self._closed:
            raise RuntimeError("capture worker is closed; open a new HindsightMemory")
        self._ensure_thread()
        self._put((job, _trace_context()), namespace)

    def _put(self, entry: tuple[Any, otel_context.Context], lane: str | None) -> None:
        if self._queue.put(entry, lane, wait=False):
            self._full.discard(lane)
            return
        if lane not in self._full:  # once while a flood lasts, not once a turn
            self._full.add(lane)
            queued = self._queue.queued(lane)
            _log("warning", "capture_queue_full", namespace=lane, size=queued)
        self._queue.put(entry, lane)

    def submit(self, item: dict[str, Any]) -> bool:
        """Queue one capture and return at once (waits only while its lane is full).

        A turn of more than ``max_messages`` messages is queued as several
        captures, in order (accepted, with a spool, all or none).

        Raises:
            RuntimeError: the worker was closed.
        """
        if self._closed:
            raise RuntimeError("capture worker is closed; open a new HindsightMemory")
        self._ensure_thread()
        items = _parts(item, self.max_messages)
        if self.on_accept is not None:
            items = self.on_accept(items)
        # The capture's span joins the submitter's trace (the node that
        # submitted it), though it runs later on the worker thread.
        context = _trace_context()
        for part in items:
            self._put((part, context), str(part.get("namespace", "")))
        return True

    @property
    def pending(self) -> int:
        """Items queued or running."""
        return self._queue.unfinished

    def pending_for(self, namespace: str) -> int:
        """Captures of ``namespace`` queued and not started yet."""
        return self._queue.count(lambda e: _of(e, namespace, None))

    def cancel(self, namespace: str, thread_id: str | None = None) -> int:
        """Drop queued captures of a namespace (or of one of its threads).

        Captures already running finish; with a spool they find their entry
        purged and write nothing. Returns how many were dropped.
        """
        dropped = self._queue.remove(lambda e: _of(e, namespace, thread_id))
        if dropped:
            _log("info", "captures_cancelled", namespace=namespace, count=dropped)
        return dropped

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every submitted capture ran; ``False`` if ``timeout`` passed."""
        return self._queue.join(timeout)

    def close(self, timeout: float | None = None) -> None:
        """Drain the queue, then stop the thread; idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._thread is not None:
            self._queue.put(_STOP, None)  # a barrier: after everything queued
            self._thread.join(timeout)

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="hindsight-capture", daemon=True
                )
                self._thread.start()
                # A daemon thread dies with the interpreter; drain queued turns
                # first, while the store still runs (see commit.at_exit).
                at_exit(self._at_exit)

    def _at_exit(self) -> None:
        self.close(timeout=30.0)

    def _run(self) -> None:
        while True:
            lane, entry = self._queue.get()
            if entry is _STOP:
                self._queue.done()
                return
            batch = self._batch(lane, entry)
            self._look_ahead(batch)
            self._handle(batch)

    def _batch(self, lane: str | None, entry: Any) -> list[Any]:
        """``entry`` and the captures queued right behind it in its lane that fit.

        Turns queued faster than they are written go to the store together
        (one capture call: one embedding call and one write round), up to
        ``max_batch`` turns and ``max_messages`` messages: the tenant's turn.
        """
        batch = [entry]
        if lane is None or not _batchable(entry):
            return batch
        size = len(entry[0]["messages_or_text"])

        def fits(nxt: Any) -> bool:
            more = len(nxt[0]["messages_or_text"]) if _batchable(nxt) else 0
            return _same_capture(entry, nxt) and size + more <= self.max_messages

        while len(batch) < self.max_batch:
            nxt = self._queue.take_next(lane, fits)
            if nxt is None:
                break
            batch.append(nxt)
            size += len(nxt[0]["messages_or_text"])
        return batch

    def _look_ahead(self, batch: list[Any]) -> None:
        """Let the captures of ``batch`` and those queued next share a model call.

        Once per capture: those planned with an earlier batch are not planned
        again. A failed plan costs nothing but the call (each capture then
        embeds its own texts).
        """
        if self.ahead is None:
            return
        mine = [e[0] for e in batch if _is_capture(e)]
        if not mine or all(id(item) in self._planned for item in mine):
            return
        queued = [e[0] for e in self._queue.peek(self.max_batch) if _is_capture(e)]
        todo = [item for item in mine + queued if id(item) not in self._planned]
        if len(todo) < 2:
            return  # nothing to share a call with
        if len(self._planned) > 4 * self.max_batch:
            self._planned.clear()  # ids of items long written
        self._planned.update(id(item) for item in todo)
        try:
            self.ahead(todo)
        except Exception as exc:  # the captures embed their own texts instead
            _log("warning", "capture_lookahead_failed", error=repr(exc))

    def _handle(self, batch: list[Any]) -> None:
        item, ctx = batch[0]
        if len(batch) > 1:
            messages = [m for it, _ in batch for m in it["messages_or_text"]]
            item = {**item, "messages_or_text": messages}
        token = otel_context.attach(ctx)
        try:
            if callable(item):
                item()
            else:
                self._capture(**item)
            self.done += len(batch)
        except Exception as exc:  # one bad turn must not stop the worker
            self.errors += len(batch)
            _log("error", "capture_failed", error=repr(exc), **_about(item))
        finally:
            otel_context.detach(token)
            self._queue.done(len(batch))


def _parts(item: dict[str, Any], size: int) -> list[dict[str, Any]]:
    """A message capture cut into captures of at most ``size`` messages, in order.

    An item spooled already (it has a ``capture_id``) stays whole: its spool
    entry is one capture.
    """
    messages = item.get("messages_or_text")
    if not isinstance(messages, list) or len(messages) <= size:
        return [item]
    if item.get("capture_id"):
        return [item]
    return [
        {**item, "messages_or_text": messages[i : i + size]}
        for i in range(0, len(messages), size)
    ]


def _is_capture(entry: Any) -> bool:
    return isinstance(entry, tuple) and isinstance(entry[0], dict)


def _batchable(entry: Any) -> bool:
    """Message captures without their own ids or spool entry can share a call."""
    if entry is _STOP:
        return False
    item = entry[0]
    return (
        isinstance(item, dict)
        and isinstance(item.get("messages_or_text"), list)
        and not item.get("capture_id")
        and not item.get("source_ids")
    )


def _same_capture(first: Any, other: Any) -> bool:
    """Whether ``other`` may join ``first``'s capture call (same everything but text)."""
    if not _batchable(other):
        return False
    a, b = first[0], other[0]
    keys = (set(a) | set(b)) - {"messages_or_text"}
    return all(a.get(k) == b.get(k) for k in keys)


def _of(entry: Any, namespace: str, thread_id: str | None) -> bool:
    """Whether a queue entry is a capture of ``namespace`` (and ``thread_id``)."""
    item = entry[0] if isinstance(entry, tuple) else None
    return (
        isinstance(item, dict)
        and item.get("namespace") == namespace
        and (thread_id is None or item.get("thread_id") == thread_id)
    )


def _about(item: Any) -> dict[str, Any]:
    if callable(item):
        return {"job": getattr(item, "__qualname__", repr(item))}
    return {"namespace": item.get("namespace")}


def _trace_context() -> otel_context.Context:
    span = parent_span()
    if span is None:
        return otel_context.Context()  # no trace around: the capture starts one
    return trace.set_span_in_context(span, otel_context.Context())
