"""One scripted 10-turn life with three changes of mind: LangMem's tools vs ours.

The same ten user turns (facts about the person, three changes of mind, a
one-off question) go through two agents built with ``create_agent``:

- **LangMem**: ``create_manage_memory_tool`` and ``create_search_memory_tool``
  over a LangGraph ``InMemoryStore`` indexed with the same embedder, driven by
  a scripted chat model that follows the tools' instructions as an
  instruction-following LLM would: each turn it searches memory for the
  turn, then creates a memory for a new fact, *updates* the memory the
  search returned when the turn changes an earlier one (by its id, as the
  tool's description asks), and stores nothing for a one-off question. Its
  extraction is perfect: it writes the fact as a clean sentence.
- **hindsight-lg**: ``HindsightMiddleware`` on the same kind of agent, with a
  chat model that only echoes what recall injected: no LLM decides anything;
  capture, supersession and recall are the engine's heuristics.

Then both are asked six direct questions (three about what changed, three
about what did not) and the top three memories each returns are read. Printed
for each: memories kept (active), current facts in the top 3 (of 6) and stale
facts in the top 3 (of 3; fewer is better).

With ``--decay-days N`` a third row runs our script again and calls
``decay()`` N days after the last turn, as a scheduled job would: the one-off
question is kept as a ``query`` memory (1-day half-life) until then, where
LangMem's model chose not to store it.

Run: ``python benchmarks/langmem_compare.py [--embedder minilm|hashing] [-v] [--decay-days N]``
(needs the ``bench`` and ``agents`` extras: ``pip install 'hindsight-lg[bench,agents]'``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import InMemoryBackend
from hindsight_lg.chat import FakeToolChatModel, echo_memories, tool_call
from hindsight_lg.embeddings import Embedder, default_embedder
from hindsight_lg.nodes import HindsightMiddleware

USER = "u-sam"
DAY = 86400.0
START = 1_760_000_000.0


@dataclass(frozen=True)
class Turn:
    """A user turn, and what an instruction-following model stores for it.

    ``fact`` is the memory it writes (``None``: nothing to keep);
    ``replaces`` a word of the earlier memory this turn changes.
    """

    text: str
    fact: str | None
    replaces: str | None = None


SCRIPT = (
    Turn(
        "I take the 7:40 train to work every morning.", "Takes the 7:40 train to work"
    ),
    Turn("I drink green tea every morning.", "Drinks green tea every morning"),
    Turn("I live in Hangzhou with my partner.", "Lives in Hangzhou with partner"),
    Turn("My sister Mei lives in Chengdu.", "Sister Mei lives in Chengdu"),
    Turn("I'm learning French on weekday evenings.", "Learning French on weekdays"),
    Turn(
        "These days I cycle to the office instead of taking the train.",
        "Cycles to the office (no longer takes the train)",
        replaces="train",
    ),
    Turn(
        "I've switched from green tea to black coffee in the mornings.",
        "Drinks black coffee in the mornings (switched from green tea)",
        replaces="tea",
    ),
    Turn("I'm allergic to cats.", "Allergic to cats"),
    Turn(
        "I moved to Shenzhen last month.",
        "Lives in Shenzhen (moved from Hangzhou last month)",
        replaces="Hangzhou",
    ),
    Turn("What's a good book to read on a long flight?", None),
)


@dataclass(frozen=True)
class Question:
    """A direct question, the word of its current answer and of a stale one."""

    text: str
    current: str
    stale: str | None = None


QUESTIONS = (
    Question("How do I get to work?", "cycle", "7:40 train"),
    Question("What do I drink in the morning?", "coffee", "drink green tea"),
    Question("Where do I live?", "Shenzhen", "live in Hangzhou"),
    Question("Where does my sister live?", "Chengdu"),
    Question("What language am I learning?", "French"),
    Question("Am I allergic to anything?", "cats"),
)


@dataclass
class Score:
    """What one system ended the script with."""

    name: str
    kept: int
    current: int
    stale: int
    tops: dict[str, list[str]]


def score(name: str, kept: int, top3: Callable[[str], list[str]]) -> Score:
    """Ask every question; count current and stale facts in each top 3."""
    tops = {q.text: top3(q.text) for q in QUESTIONS}
    current = sum(
        any(q.current.lower() in t.lower() for t in tops[q.text]) for q in QUESTIONS
    )
    stale = sum(
        any(_is_stale(q, t) for t in tops[q.text]) for q in QUESTIONS if q.stale
    )
    return Score(name, kept, current, stale, tops)


def _is_stale(q: Question, text: str) -> bool:
    """A memory that states the old answer as current (not as what it replaced)."""
    low = text.lower()
    assert q.stale is not None
    return q.stale.lower() in low and q.current.lower() not in low


# -- LangMem ---------------------------------------------------------------


def langmem_model() -> FakeToolChatModel:
    """A scripted model that follows LangMem's tool instructions for :data:`SCRIPT`.

    Per user turn: search memory for the turn; then create the turn's fact,
    or update the memory the search returned that the turn replaces (the
    tool's "an existing MEMORY is incorrect or outdated"), or do nothing for
    a question; then answer.
    """
    by_text = {t.text: t for t in SCRIPT}

    def respond(messages: list[BaseMessage]) -> AIMessage:
        turn_at = max(i for i, m in enumerate(messages) if isinstance(m, HumanMessage))
        turn = by_text[str(messages[turn_at].content)]
        since = messages[turn_at + 1 :]
        tools = [m for m in since if isinstance(m, ToolMessage)]
        if not tools:
            return tool_call("search_memory", {"query": turn.text, "limit": 5})
        if len(tools) == 1 and turn.fact is not None:
            args: dict[str, Any] = {"content": turn.fact, "action": "create"}
            old = _found(str(tools[0].content), turn.replaces)
            if old is not None:
                args = {"content": turn.fact, "action": "update", "id": old}
            return tool_call("manage_memory", args)
        return AIMessage("Noted.")

    return FakeToolChatModel(respond=respond)


def _found(search_result: str, word: str | None) -> str | None:
    """The id of the memory in a search result that mentions ``word``."""
    if word is None:
        return None
    for item in json.loads(search_result):
        if word.lower() in str(item["value"]["content"]).lower():
            return str(item["key"])
    return None


def run_langmem(embedder: Embedder) -> Score:
    """The script through LangMem's tools on an indexed InMemoryStore."""
    from langmem import create_manage_memory_tool, create_search_memory_tool

    store = InMemoryStore(
        index={
            "dims": embedder.dim,
            "embed": lambda texts: embedder.embed(list(texts)).tolist(),
        }
    )
    namespace = ("memories", "{langgraph_user_id}")
    tools = [
        create_manage_memory_tool(namespace=namespace),
        create_search_memory_tool(namespace=namespace),
    ]
    agent = create_agent(langmem_model(), tools=tools, store=store)
    config = {"configurable": {"langgraph_user_id": USER}}
    for turn in SCRIPT:
        agent.invoke({"messages": [HumanMessage(turn.text)]}, config)
    items = store.search(("memories", USER), limit=100)

    def top3(question: str) -> list[str]:
        hits = store.search(("memories", USER), query=question, limit=3)
        return [str(h.value["content"]) for h in hits]

    return score("LangMem tools + instruction-following model", len(items), top3)


# -- hindsight-lg ------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now


def run_hindsight(embedder: Embedder, decay_days: float = 0.0) -> Score:
    """The script through ``HindsightMiddleware`` with no LLM at all.

    ``decay_days > 0``: one ``decay()`` that many days after the last turn.
    """
    clock = _Clock()
    backend = InMemoryBackend()
    with HindsightMemory(backend, embedder, clock=clock) as memory:
        middleware = HindsightMiddleware(memory, reflect=False)
        model = FakeToolChatModel(respond=echo_memories)
        agent = create_agent(model, tools=[], middleware=[middleware])
        for i, turn in enumerate(SCRIPT):
            clock.now = START + i * DAY  # one turn a day
            config = {"configurable": {"user_id": USER, "thread_id": f"t{i}"}}
            agent.invoke({"messages": [HumanMessage(turn.text)]}, config)
        memory.flush()
        name = "hindsight-lg middleware, no LLM"
        if decay_days > 0:
            clock.now += decay_days * DAY
            memory.decay(USER)
            name += f", decay() {decay_days:g} days later"
        kept = len(memory.list_memories(USER))

        def top3(question: str) -> list[str]:
            result = memory.recall(question, namespace=USER, k=3, timeout=None)
            return [r.content for r in result.records]

        return score(name, kept, top3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="minilm", help="minilm or hashing")
    parser.add_argument("--verbose", "-v", action="store_true", help="the top 3s")
    parser.add_argument(
        "--decay-days", type=float, default=0.0, help="add a row with decay() after"
    )
    args = parser.parse_args()
    embedder = default_embedder(args.embedder)
    rows = [run_langmem(embedder), run_hindsight(embedder)]
    if args.decay_days > 0:
        rows.append(run_hindsight(embedder, args.decay_days))
    print(f"embedder {embedder.model_id}; {len(SCRIPT)} turns, 3 changes of mind")
    print("| system | memories kept | current in top 3 | stale in top 3 |")
    print("|---|---|---|---|")
    for r in rows:
        stale_of = sum(1 for q in QUESTIONS if q.stale)
        print(
            f"| {r.name} | {r.kept} | {r.current}/{len(QUESTIONS)} "
            f"| {r.stale}/{stale_of} |"
        )
    if args.verbose:
        for r in rows:
            print(f"\n{r.name}")
            for question, top in r.tops.items():
                print(f"  {question}")
                for text in top:
                    print(f"    - {text}")


if __name__ == "__main__":
    main()
