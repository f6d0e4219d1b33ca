"""Latency that memory adds to an agent turn, against the same graph without memory.

Same fake chat model, same StateGraph; measured in one run, with the two
sides of every comparison interleaved turn by turn so machine load hits both
alike:

* turn p50/p95 of the plain graph and of the graph with ``add_hindsight``
  (reflection off, so the figure is recall + capture on the turn's path);
  with ``--reflection``, also the graph with background and with inline
  (``reflect="sync"``) reflection;
* capture on the turn's path: the capture node's own time (it only queues),
  with the worker idle (a real model call outlasts a capture) and saturated;
* recall-node overhead against the recall itself (``memory.recall`` on the
  same query and memory).

Run: ``OMP_NUM_THREADS=1 python benchmarks/overhead.py [--turns 300] [--memories 2000]``
(add ``--uri ./bench.db`` for Milvus Lite instead of the in-memory backend).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph

from hindsight_lg import HindsightMemory
from hindsight_lg.nodes import add_hindsight, capture_node, recall_node
from hindsight_lg.testing import FakeToolChatModel, HashingEmbedder, InMemoryBackend

QUESTIONS = [
    "What tea do I like?",
    "When is my sister's wedding?",
    "Which city do I live in?",
    "What am I allergic to?",
]


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) in milliseconds."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] * 1000


def graph(memory: HindsightMemory | None, reflect: Any = False) -> Any:
    model = FakeToolChatModel(responses=[AIMessage("ok")])
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_edge(START, "agent")
    if memory is not None:
        add_hindsight(builder, memory=memory, reflect=reflect, timeout=None)
    return builder.compile()


def seed(memory: HindsightMemory, n: int) -> None:
    facts = [
        "I like jasmine tea",
        "My sister's wedding is on June 14",
        "I live in Porto",
        "I am allergic to peanuts",
    ]
    for i in range(n):
        memory.submit(f"{facts[i % 4]} (note {i})", namespace="u1", dedupe=False)
    memory.flush()


def time_turns(
    apps: list[Any], memory: HindsightMemory, turns: int
) -> list[list[float]]:
    """Turn latencies of each app, interleaved; the worker is drained between turns."""
    config: RunnableConfig = {"configurable": {"user_id": "u1", "thread_id": "t"}}
    out: list[list[float]] = [[] for _ in apps]
    for i in range(turns):
        text = f"{QUESTIONS[i % 4]} I also want to say hello number {i}."
        for app, times in zip(apps, out, strict=True):
            start = time.perf_counter()
            app.invoke({"messages": [HumanMessage(text)]}, config)
            times.append(time.perf_counter() - start)
            # A real model call outlasts the background work: start idle.
            memory.flush()
    return out


def time_node(
    node: Any, memory: HindsightMemory, turns: int, answered: bool, paced: bool = False
) -> list[float]:
    """The node's own time; every call brings new messages (none deduplicated away)."""
    tag = time.perf_counter_ns()
    config: RunnableConfig = {"configurable": {"user_id": "u1", "thread_id": "b"}}
    out = []
    for i in range(turns):
        messages: list[Any] = [HumanMessage(f"{QUESTIONS[i % 4]} #{i} {tag}")]
        if answered:
            messages.append(AIMessage(f"answer {i} {tag}"))
        start = time.perf_counter()
        node.invoke({"messages": messages}, config)
        out.append(time.perf_counter() - start)
        if paced:
            # A real model call outlasts one capture: the worker is idle again
            # when the next turn starts.
            memory.flush()
    memory.flush()
    return out


def time_recall(memory: HindsightMemory, turns: int) -> tuple[list[float], list[float]]:
    """Recall node and ``memory.recall`` on the same queries, interleaved."""
    node = recall_node(memory, timeout=None)
    config: RunnableConfig = {"configurable": {"user_id": "u1", "thread_id": "b"}}
    in_node: list[float] = []
    alone: list[float] = []
    for i in range(turns):
        query = f"{QUESTIONS[i % 4]} #{i}"
        state = {"messages": [HumanMessage(query)]}
        # Alternate which goes first, so warm caches favour neither side.
        for first in (i % 2 == 0, i % 2 == 1):
            start = time.perf_counter()
            if first:
                node.invoke(state, config)
            else:
                memory.recall(query, namespace="u1", timeout=None)
            (in_node if first else alone).append(time.perf_counter() - start)
    return in_node, alone


def report(name: str, values: list[float]) -> None:
    print(f"{name:40s} p50 {pct(values, 50):8.2f} ms  p95 {pct(values, 95):8.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument(
        "--uri", default=None, help="Milvus Lite file (default: in-memory)"
    )
    parser.add_argument(
        "--reflection",
        action="store_true",
        help="also time background and inline reflection",
    )
    args = parser.parse_args()
    if args.uri:
        memory = HindsightMemory.from_uri(args.uri, embedder="hashing")
        memory.forget("u1")
    else:
        memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    seed(memory, args.memories)
    apps = [graph(None), graph(memory)]
    if args.reflection:
        apps += [graph(memory, reflect="background"), graph(memory, reflect="sync")]
    time_turns(apps, memory, 10)  # warm-up
    turns = time_turns(apps, memory, args.turns)
    capture = time_node(capture_node(memory), memory, args.turns, True, paced=True)
    busy = time_node(capture_node(memory), memory, args.turns, True)
    recall_n, recall_raw = time_recall(memory, args.turns)
    print(
        f"{args.memories} memories, {args.turns} turns, backend "
        f"{memory.backend.capabilities.name}, load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cpus"
    )
    names = ["turn, plain graph", "turn, add_hindsight (no reflection)"]
    names += ["turn, reflection in background", "turn, reflection inline (sync)"]
    for name, values in zip(names, turns, strict=False):
        report(name, values)
    report("capture node, worker idle", capture)
    report("capture node, worker saturated", busy)
    report("recall node", recall_n)
    report("memory.recall alone (interleaved)", recall_raw)
    base, with_memory = turns[0], turns[1]
    print(
        f"added per turn: p50 {pct(with_memory, 50) - pct(base, 50):.2f} ms, "
        f"p95 {pct(with_memory, 95) - pct(base, 95):.2f} ms"
    )
    print(
        f"capture p95 on the turn's path: {pct(capture, 95):.2f} ms idle worker, "
        f"{pct(busy, 95):.2f} ms saturated worker (target <= 2 ms)"
    )
    for q in (50, 95):
        print(
            f"recall node p{q} - recall p{q}: "
            f"{pct(recall_n, q) - pct(recall_raw, q):.2f} ms (target <= 5 ms); "
            f"ratio {pct(recall_n, q) / pct(recall_raw, q):.3f}x"
        )
    paired = [n - r for n, r in zip(recall_n, recall_raw, strict=True)]
    print(f"recall node - recall, paired per query: median {pct(paired, 50):.2f} ms")
    if args.reflection:
        bg, inline = turns[2], turns[3]
        print(
            f"reflection on the turn's path: p50 background "
            f"{pct(bg, 50) - pct(with_memory, 50):.2f} ms vs inline "
            f"{pct(inline, 50) - pct(with_memory, 50):.2f} ms"
        )
    memory.close()


if __name__ == "__main__":
    main()
