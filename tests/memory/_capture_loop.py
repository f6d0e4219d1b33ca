"""Helper of the SIGKILL test: a zygote that forks write loops on request.

It imports hindsight-lg once; each line ``DB SEED OUT MODE`` on stdin forks a
child (its own session, so its Milvus Lite server dies with it) that opens the
store (the spool is the default ``DB.spool``), writes ``HELD <json>`` with
what the store holds, then runs one kind of write until killed, writing
``ACK <token>`` to OUT once a write of a token was acknowledged. The child's
pid is printed on stdout. A store that refuses to open writes ``REFUSED
<error>`` instead of ``HELD``.

Modes: ``capture`` (``capture()`` returns), ``submit`` (``submit()``
accepts), ``node`` (a graph with the capture node returns), ``open`` (only
opens the store: the kill lands in a first open), ``consolidate`` (captures
and consolidates in turn), ``reembed`` (re-embeds the store again and again)
and ``forget`` (submits to tenant ``gone`` and forgets it in turn, writing
``FORGOT`` after each forget returned).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sys
from collections import Counter
from typing import Any, TextIO

from hindsight_lg import HindsightMemory
from hindsight_lg.errors import StoreUnavailable
from hindsight_lg.model import EdgeType, Status, Tier
from hindsight_lg.testing import HashingEmbedder

TOKEN = re.compile(r"tk[a-z]{12}")
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def held(memory: HindsightMemory) -> dict[str, Any]:
    """Token counts of episodes, tenant ``gone``, and consolidation's invariants."""
    rows = memory.list_memories("k", history=True, limit=100_000)
    episodes = [r for r in rows if r.tier is Tier.EPISODIC]
    members: Counter[str] = Counter()
    for summary in (r for r in rows if r.tier is Tier.SEMANTIC):
        for edge in memory.edges("k", summary.id):
            if edge.type is EdgeType.DERIVED_FROM and edge.src == summary.id:
                members[edge.dst] += 1
    gone = memory.list_memories("gone", history=True, limit=100_000)
    return {
        "tokens": Counter(t for r in episodes for t in TOKEN.findall(r.content)),
        "gone": sorted(t for r in gone for t in TOKEN.findall(r.content)),
        "derived_twice": sum(1 for n in members.values() if n > 1),
        "active_derived": sum(
            1 for r in episodes if r.id in members and r.status is Status.ACTIVE
        ),
        "unfinished": sum(1 for r in rows if r.meta.get("consolidating")),
    }


class Loop:
    """One child's writes, each acknowledged on ``out`` once it returned."""

    def __init__(self, db: str, seed: int, out: TextIO) -> None:
        self.db, self.out = db, out
        self.rng = random.Random(seed)
        self.seed = seed

    def token(self) -> tuple[str, str]:
        words = " ".join("".join(self.rng.choices(LETTERS, k=7)) for _ in range(3))
        token = "tk" + "".join(self.rng.choices(LETTERS, k=12))
        return f"Remember {words} {token}", token

    def open(self) -> tuple[HindsightMemory, dict[str, Any]]:
        """Open the store; finish a consolidation a kill interrupted, as the next
        ``consolidate()`` would, and report what the store holds then."""
        memory = HindsightMemory.from_uri(self.db, embedder=HashingEmbedder())
        report = held(memory)
        if report["unfinished"]:
            memory.consolidate("k")
            report = {**held(memory), "finished": report["unfinished"]}
        return memory, report

    def ack(self, token: str) -> None:
        self.out.write("ACK " + token + "\n")

    def capture(self, memory: HindsightMemory) -> None:
        while True:
            text, token = self.token()
            memory.capture(text, namespace="k")
            self.ack(token)

    def submit(self, memory: HindsightMemory) -> None:
        while True:
            text, token = self.token()
            memory.submit(text, namespace="k")
            self.ack(token)

    def node(self, memory: HindsightMemory) -> None:
        from langchain_core.messages import HumanMessage
        from langgraph.graph import END, START, MessagesState, StateGraph

        from hindsight_lg.nodes import capture_node

        builder = StateGraph(MessagesState)
        builder.add_node("capture", capture_node(memory))
        builder.add_edge(START, "capture")
        builder.add_edge("capture", END)
        graph = builder.compile()
        config = {"configurable": {"user_id": "k", "thread_id": f"t{self.seed}"}}
        for i in range(10**9):
            text, token = self.token()
            message = HumanMessage(text, id=f"m{self.seed}-{i}")
            graph.invoke({"messages": [message]}, config)  # type: ignore[arg-type]
            self.ack(token)

    def consolidate(self, memory: HindsightMemory) -> None:
        while True:
            for _ in range(4):
                text, token = self.token()
                memory.capture(
                    # Alike enough to cluster, not to merge (random words).
                    f"On the Harz trip with Tom we hiked up the Brocken: {text}",
                    namespace="k",
                )
                self.ack(token)
            memory.consolidate("k")

    def reembed(self, memory: HindsightMemory) -> None:
        from hindsight_lg.memory.jobs.reembed import reembed

        for _ in range(3):
            text, token = self.token()
            memory.capture(text, namespace="k")
            self.ack(token)
        memory.close()
        while True:
            reembed(self.db, to=HashingEmbedder())

    def forget(self, memory: HindsightMemory) -> None:
        while True:
            for _ in range(3):
                text, token = self.token()
                memory.submit(text, namespace="gone")
                self.out.write("GONE " + token + "\n")
            memory.forget("gone")
            self.out.write("FORGOT\n")
            text, token = self.token()
            memory.capture(text, namespace="k")
            self.ack(token)


def run(db: str, seed: int, out_path: str, mode: str) -> None:
    """Report what the store holds, then write in ``mode`` until killed."""
    with open(out_path, "w", buffering=1, encoding="utf-8") as out:
        loop = Loop(db, seed, out)
        try:
            memory, report = loop.open()
        except StoreUnavailable as exc:
            out.write("REFUSED " + " ".join(str(exc).split()) + "\n")
            return
        out.write("HELD " + json.dumps(report) + "\n")
        if mode != "open":
            getattr(loop, mode)(memory)
        signal.pause()


def main() -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reap themselves
    for line in sys.stdin:
        db, seed, out, mode = line.split()
        pid = os.fork()
        if pid == 0:
            os.setsid()
            # Stdout is the zygote's pid channel to the test: the child's own
            # output (structlog prints to stdout by default) goes to stderr.
            os.dup2(2, 1)
            try:
                run(db, int(seed), out, mode)
            finally:
                os._exit(1)
        print(pid, flush=True)


if __name__ == "__main__":
    main()
