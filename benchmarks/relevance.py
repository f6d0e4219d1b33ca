"""What recall injects: the labelled relevance set and the three templates.

Prints, for the labelled set (``tests/memory/data/relevance.json``) and each
embedder, precision, recall, lines and tokens per answerable question and
what the questions without an answer inject; then, for each template's
scripted turns plus one unrelated question per user, the memory lines and
tokens injected per turn. ``--before`` turns the relevance rule and the
line rules of issue-era recall off (``relevance=False``, fragments alone,
no near-duplicate drop) for the comparison.

OMP_NUM_THREADS=1 python benchmarks/relevance.py [--before] [--embedders hashing,minilm]
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg._text import approx_tokens
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.bench.relevance import evaluate, load_set
from hindsight_lg.embeddings import embedder_from_name
from hindsight_lg.templates import customer_support, personal_assistant, team
from hindsight_lg.templates._chat import chat_model

SET = Path(__file__).parent.parent / "tests" / "memory" / "data" / "relevance.json"
UNRELATED = "What is the boiling point of water at sea level?"
TEMPLATES: dict[str, tuple[Any, tuple[str, ...]]] = {
    "personal_assistant": (personal_assistant, ("maya", "tom")),
    "customer_support": (customer_support, ("c-17", "c-99")),
    "team": (team, (team.USER,)),
}


def policy(before: bool) -> Policy:
    """Recall's defaults, or the earlier rules for the comparison."""
    if not before:
        return Policy()
    return replace(
        Policy(), relevance=False, turn_chars_full=0, drop_near_duplicates=False
    )


def counting(
    memory: HindsightMemory, seen: list[tuple[int, int]]
) -> Callable[..., Any]:
    """``memory.recall`` wrapped to note lines and tokens of each result."""
    inner = memory.recall

    def recall(*args: Any, **kwargs: Any) -> Any:
        result = inner(*args, **kwargs)
        lines = sum(1 for m in result.memories if m.line)
        seen.append((lines, approx_tokens(result.to_prompt())))
        return result

    return recall


def templates(before: bool, embedder: str) -> None:
    """Lines and tokens injected per turn by each template, plus an unrelated turn."""
    for name, (module, users) in TEMPLATES.items():
        memory = HindsightMemory(
            InMemoryBackend(), embedder_from_name(embedder), policy=policy(before)
        )
        seen: list[tuple[int, int]] = []
        memory.recall = counting(memory, seen)  # type: ignore[method-assign]
        module.run(memory, _model(module), out=lambda _: None)
        turns = list(seen)
        for user in users:
            memory.recall(UNRELATED, namespace=user, timeout=None)
        unrelated = seen[len(turns) :]
        print(
            f"  {name:<20} turns {len(turns)}: "
            f"{statistics.fmean(n for n, _ in turns):.1f} lines, "
            f"{statistics.fmean(t for _, t in turns):.0f} tokens per turn; "
            f"unrelated question: {statistics.fmean(n for n, _ in unrelated):.1f} "
            f"lines, {statistics.fmean(t for _, t in unrelated):.0f} tokens"
        )
        memory.close()


def _model(module: Any) -> Any:
    offline = getattr(module, "offline_model", None)
    return offline() if offline is not None else chat_model()


def main() -> None:
    """Print the labelled set's figures and the templates' per embedder."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", action="store_true", help="earlier recall rules")
    p.add_argument("--embedders", default="hashing,minilm")
    args = p.parse_args()
    users = load_set(SET)
    questions = sum(len(u.questions) for u in users)
    for name in args.embedders.split(","):
        memory = HindsightMemory(
            InMemoryBackend(), embedder_from_name(name), policy=policy(args.before)
        )
        figures = evaluate(users, memory).summary()
        memory.close()
        print(f"{name}: labelled set, {questions} questions")
        print("  " + ", ".join(f"{k} {v:.2f}" for k, v in figures.items()))
        templates(args.before, name)


if __name__ == "__main__":
    main()
