"""The background capture worker: non-blocking submit, flush, close, claims."""

from __future__ import annotations

import threading
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from hindsight_lg import HindsightMemory
from hindsight_lg._messages import message_key, plain_messages
from hindsight_lg.memory.durability.worker import CaptureWorker
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


def test_submit_returns_before_the_capture_runs() -> None:
    """submit() hands the item over and returns while the capture is still blocked."""
    gate = threading.Event()
    seen: list[str] = []

    def slow(**item: object) -> None:
        gate.wait(5)
        seen.append(str(item["namespace"]))

    worker = CaptureWorker(slow)
    worker.submit({"messages_or_text": "x", "namespace": "u1"})
    assert seen == []
    assert worker.pending == 1
    gate.set()
    assert worker.flush(timeout=5)
    assert seen == ["u1"]
    worker.close()


def test_flush_times_out_while_work_is_pending() -> None:
    """flush(timeout) reports False when captures are still running."""
    gate = threading.Event()
    worker = CaptureWorker(lambda **item: gate.wait(5))
    worker.submit({"messages_or_text": "x", "namespace": "u1"})
    assert worker.flush(timeout=0.05) is False
    gate.set()
    worker.close()


def test_close_drains_queue_and_rejects_new_items() -> None:
    """close() runs every queued capture, then submit() raises."""
    done: list[int] = []
    worker = CaptureWorker(lambda **item: done.append(int(item["n"])))
    for n in range(20):
        worker.submit({"messages_or_text": "x", "namespace": "u", "n": n})
    worker.close()
    assert done == list(range(20))
    with pytest.raises(RuntimeError, match="closed"):
        worker.submit({"messages_or_text": "x", "namespace": "u"})


def test_a_failing_capture_does_not_stop_the_worker() -> None:
    """An exception in one capture is counted and the next item still runs."""
    done: list[str] = []

    def flaky(**item: object) -> None:
        if item["messages_or_text"] == "bad":
            raise ValueError("boom")
        done.append(str(item["messages_or_text"]))

    worker = CaptureWorker(flaky)
    worker.submit({"messages_or_text": "bad", "namespace": "u"})
    worker.submit({"messages_or_text": "good", "namespace": "u"})
    worker.close()
    assert (worker.errors, done) == (1, ["good"])


def test_bounded_queue_applies_back_pressure() -> None:
    """With a full queue, submit() waits for room instead of dropping the turn."""
    gate = threading.Event()
    done: list[int] = []

    def blocked(**item: object) -> None:
        gate.wait(5)
        done.append(int(item["n"]))

    worker = CaptureWorker(blocked, maxsize=1)
    worker.submit({"messages_or_text": "x", "namespace": "u", "n": 0})
    time.sleep(0.05)  # the thread takes item 0 and blocks on the gate
    worker.submit({"messages_or_text": "x", "namespace": "u", "n": 1})
    threading.Timer(0.1, gate.set).start()
    worker.submit({"messages_or_text": "x", "namespace": "u", "n": 2})
    worker.close()
    assert done == [0, 1, 2]


def test_claims_are_per_namespace_and_once() -> None:
    """A message key is fresh once per namespace."""
    worker = CaptureWorker(lambda **item: None)
    assert worker.claim("u1", ["a", "b"]) == ["a", "b"]
    assert worker.claim("u1", ["b", "c"]) == ["c"]
    assert worker.claim("u2", ["a"]) == ["a"]


def test_plain_messages_are_json_ready_and_skip_system() -> None:
    """Messages become role/content/id dicts; system messages are dropped."""
    plain = plain_messages(
        [SystemMessage("sys"), HumanMessage("hi", id="h1"), AIMessage("yo", id="a1")]
    )
    assert plain == [
        {"role": "human", "content": "hi", "id": "h1"},
        {"role": "ai", "content": "yo", "id": "a1"},
    ]
    assert message_key({"role": "user", "content": "hi"}).startswith("sha1:")


def test_memory_submit_dedupes_and_flush_makes_it_searchable() -> None:
    """memory.submit queues each message id once; flush() waits for the writes."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    msg = HumanMessage("I prefer green tea over coffee", id="m1")
    assert memory.submit([msg], namespace="u1") == 1
    assert memory.submit([msg], namespace="u1") == 0
    memory.flush()
    contents = [r.content for r in memory.list_memories("u1")]
    assert contents == ["I prefer green tea over coffee"]
    memory.close()


def test_deferred_jobs_run_in_order_after_earlier_captures() -> None:
    """A deferred job runs after the captures queued before it, and flush waits for it."""
    order: list[str] = []
    worker = CaptureWorker(lambda **item: order.append(str(item["namespace"])))
    worker.submit({"messages_or_text": "x", "namespace": "u1"})
    worker.defer(lambda: order.append("job"))
    worker.submit({"messages_or_text": "y", "namespace": "u2"})
    assert worker.flush(timeout=5)
    assert order == ["u1", "job", "u2"]
    worker.close()


def test_a_failing_job_is_counted_and_the_worker_goes_on() -> None:
    """A job that raises counts as an error; later captures still run."""
    seen: list[str] = []
    worker = CaptureWorker(lambda **item: seen.append(str(item["namespace"])))

    def broken() -> None:
        raise RuntimeError("boom")

    worker.defer(broken)
    worker.submit({"messages_or_text": "x", "namespace": "u1"})
    assert worker.flush(timeout=5)
    assert worker.errors == 1
    assert seen == ["u1"]
    worker.close()
    with pytest.raises(RuntimeError, match="closed"):
        worker.defer(lambda: None)


def test_turns_queued_behind_a_busy_worker_share_one_capture_call() -> None:
    """Message captures for one target that pile up are written in one call, in order,
    after another tenant's turn (tenants take turns)."""
    gate = threading.Event()
    calls: list[list[str]] = []

    def capture(**item: object) -> None:
        gate.wait(5)
        messages = item["messages_or_text"]
        assert isinstance(messages, list)
        calls.append([str(m["content"]) for m in messages])

    worker = CaptureWorker(capture)
    first = {"messages_or_text": [{"role": "user", "content": "m0"}], "namespace": "u"}
    worker.submit(first)
    time.sleep(0.1)  # the worker now holds m0 and waits at the gate
    for i in range(1, 6):
        item = {
            "messages_or_text": [{"role": "user", "content": f"m{i}"}],
            "namespace": "u",
        }
        worker.submit(item)
    other = {"messages_or_text": [{"role": "user", "content": "x"}], "namespace": "v"}
    worker.submit(other)
    gate.set()
    assert worker.flush(timeout=5)
    worker.close()
    assert calls == [["m0"], ["x"], ["m1", "m2", "m3", "m4", "m5"]]
    assert worker.done == 7
