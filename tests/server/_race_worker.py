"""One side of the supersede/forget race, run in a process of its own.

:func:`serve` opens its own engine on the Milvus server with
``HindsightMemory.from_uri``, says it is ready, then runs one call per
:class:`Job`: it waits at the barrier it shares with the other side, sleeps
the job's offset and makes its call, and reports what the call raised (an
empty string when nothing). ``None`` on the job queue ends it.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier

from hindsight_lg import HindsightMemory
from hindsight_lg.errors import ConflictError

CHANGE_OF_MIND = "I moved to Berlin, I live in Berlin now"
NEW_THREAD = "t-new"
OLD_THREAD = "t-old"
# Both sides reach the barrier within this long, or the run is broken.
BARRIER_S = 120.0


@dataclass(frozen=True)
class Job:
    """One call of one round: what to do, in which namespace, after how long."""

    action: str  # "capture", "forget-id" or "forget-thread"
    namespace: str
    old_id: str
    delay: float


def serve(
    uri: str,
    prefix: str,
    start: Barrier,
    jobs: Queue[Job | None],
    results: Queue[tuple[str, str]],
) -> None:
    """Run jobs from ``jobs`` against the server at ``uri`` until ``None``."""
    memory = HindsightMemory.from_uri(uri, embedder="hashing", prefix=prefix)
    try:
        results.put(("ready", ""))
        while (job := jobs.get()) is not None:
            start.wait(timeout=BARRIER_S)
            time.sleep(job.delay)
            results.put((job.action, _run(memory, job)))
    finally:
        memory.close()


def _run(memory: HindsightMemory, job: Job) -> str:
    """Make the job's call; a documented conflict is retried, as callers do."""
    while True:
        try:
            _call(memory, job)
        except ConflictError:
            continue
        except Exception:
            return traceback.format_exc()
        return ""


def _call(memory: HindsightMemory, job: Job) -> None:
    if job.action == "capture":
        memory.capture(CHANGE_OF_MIND, namespace=job.namespace, thread_id=NEW_THREAD)
    elif job.action == "forget-id":
        memory.forget(job.namespace, [job.old_id])
    elif job.action == "forget-thread":
        memory.forget(job.namespace, thread_id=OLD_THREAD)
    else:
        raise ValueError(f"unknown action {job.action!r}")
