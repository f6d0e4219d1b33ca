"""One app replica on a Milvus server, driven line by line (run as a process).

Usage: python -m tests.server._replica URI PREFIX

Reads commands from stdin, one per line, tab-separated, and answers each with
one JSON line: ``capture NS TEXT`` -> the new ids; ``recall NS QUERY`` -> the
recalled ids; ``forget NS ID`` -> how many were deleted; ``correct NS ID
TEXT`` -> the new version's id; ``active NS`` -> the active ids. The memory
stays open between commands, read cache included, as a serving replica's does.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import structlog

from hindsight_lg import HindsightMemory


def _answer(memory: HindsightMemory, verb: str, args: list[str]) -> Any:
    if verb == "capture":
        return [r.id for r in memory.capture(args[1], namespace=args[0])]
    if verb == "recall":
        result = memory.recall(args[1], namespace=args[0], timeout=None)
        return [m.record.id for m in result.memories]
    if verb == "forget":
        return memory.forget(args[0], ids=[args[1]])
    if verb == "correct":
        return memory.correct(args[0], args[1], args[2]).memory.id
    if verb == "active":
        return [r.id for r in memory.list_memories(args[0])]
    raise ValueError(f"unknown command {verb!r}")


def main(uri: str, prefix: str) -> None:
    """Serve commands until stdin closes."""
    # stdout carries the answers: logs go to stderr, as an app would set up.
    structlog.configure(logger_factory=structlog.PrintLoggerFactory(sys.stderr))
    memory = HindsightMemory.from_uri(uri, embedder="hashing", prefix=prefix)
    try:
        print(json.dumps("ready"), flush=True)
        for line in sys.stdin:
            verb, *args = line.rstrip("\n").split("\t")
            try:
                out: Any = {"ok": _answer(memory, verb, args)}
            except Exception as exc:  # the test reads the error, the replica lives on
                out = {"error": f"{type(exc).__name__}: {exc}"}
            print(json.dumps(out), flush=True)
    finally:
        memory.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
