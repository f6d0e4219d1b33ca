"""Latency that memory adds to an agent turn, against the same graph without memory.

Same fake chat model, same StateGraph; measured in one run:

* turn p50/p95 of the plain graph and of the graph with ``add_hindsight``
  (reflection off, so the figure is recall + capture on the turn's path);
* capture on the turn's path: the capture node's own time (it only queues);
* recall-node overhead against the recall itself (``memory.recall`` on the
  same query and memory).

Run: ``OMP_NUM_THREADS=1 python benchmarks/overhead.py [--turns 300] [--memories 2000]``
(add ``--uri ./bench.db`` for Milvus Lite instead of the in-memory backend).
"""

from __future__ import annotations

import argparse
import statistics
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


def graph(memory: HindsightMemory | None) -> Any:
    model = FakeToolChatModel(responses=[AIMessage("ok")])
    builder = StateGraph(MessagesState)
    builder.add_node("agent", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_edge(START, "agent")
    if memory is not None:
        add_hindsight(builder, memory=memory, reflect=False, timeout=None)
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


def time_turns(app: Any, turns: int) -> list[float]:
    config: RunnableConfig = {"configurable": {"user_id": "u1"}}
    out = []
    for i in range(turns):
        text = f"{QUESTIONS[i % 4]} I also want to say hello number {i}."
        start = time.perf_counter()
        app.invoke({"messages": [HumanMessage(text)]}, config)
        out.append(time.perf_counter() - start)
    return out


def time_node(
    node: Any, memory: HindsightMemory, turns: int, answered: bool, paced: bool = False
) -> list[float]:
    config: RunnableConfig = {"configurable": {"user_id": "u1", "thread_id": "b"}}
    out = []
    for i in range(turns):
        messages: list[Any] = [HumanMessage(f"{QUESTIONS[i % 4]} #{i}")]
        if answered:
            messages.append(AIMessage(f"answer {i}"))
        start = time.perf_counter()
        node.invoke({"messages": messages}, config)
        out.append(time.perf_counter() - start)
        if paced:
            # A real model call outlasts one capture: the worker is idle again
            # when the next turn starts.
            memory.flush()
    memory.flush()
    return out


def time_recall(memory: HindsightMemory, turns: int) -> list[float]:
    out = []
    for i in range(turns):
        start = time.perf_counter()
        memory.recall(f"{QUESTIONS[i % 4]} #{i}", namespace="u1", timeout=None)
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument(
        "--uri", default=None, help="Milvus Lite file (default: in-memory)"
    )
    args = parser.parse_args()
    if args.uri:
        memory = HindsightMemory.from_uri(args.uri, embedder="hashing")
        memory.forget("u1")
    else:
        memory = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    seed(memory, args.memories)
    plain, mem_graph = graph(None), graph(memory)
    time_turns(plain, 20), time_turns(mem_graph, 20)  # warm-up
    base = time_turns(plain, args.turns)
    with_memory = time_turns(mem_graph, args.turns)
    memory.flush()
    capture = time_node(capture_node(memory), memory, args.turns, True, paced=True)
    busy = time_node(capture_node(memory), memory, args.turns, True)
    recall_n = time_node(recall_node(memory, timeout=None), memory, args.turns, False)
    recall_raw = time_recall(memory, args.turns)
    rows = [
        ("turn, plain graph", base),
        ("turn, with add_hindsight", with_memory),
        ("capture node, worker idle", capture),
        ("capture node, worker saturated", busy),
        ("recall node", recall_n),
        ("memory.recall alone", recall_raw),
    ]
    print(
        f"{args.memories} memories, {args.turns} turns, backend "
        f"{memory.backend.capabilities.name}"
    )
    for name, values in rows:
        print(
            f"{name:36s} p50 {pct(values, 50):7.2f} ms  p95 {pct(values, 95):7.2f} ms"
        )
    added = pct(with_memory, 95) - pct(base, 95)
    overhead = pct(recall_n, 95) - pct(recall_raw, 95)
    print(f"added per turn (p95 difference): {added:.2f} ms")
    print(
        f"capture p95 on the turn's path: {pct(capture, 95):.2f} ms idle worker, "
        f"{pct(busy, 95):.2f} ms saturated worker (target <= 2 ms)"
    )
    print(
        f"recall node p95 - recall p95: {overhead:.2f} ms (target <= 5 ms); "
        f"ratio {pct(recall_n, 95) / pct(recall_raw, 95):.2f}x"
    )
    print(
        f"mean turn ratio with/without memory: "
        f"{statistics.mean(with_memory) / statistics.mean(base):.2f}x"
    )
    memory.close()


if __name__ == "__main__":
    main()
