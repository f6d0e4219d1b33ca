"""Lessons reflection writes per 100 turns of the three chatbot templates (offline).

Each template's script is played again and again on one memory (so later
rounds meet what earlier rounds stored) until at least ``--turns`` user turns
have run; then the experience lessons written by reflection are counted and a
few are printed.

Run: ``python benchmarks/reflection_lessons.py [--turns 100] [--show 3]``
"""

from __future__ import annotations

import argparse
from typing import Any

from hindsight_lg import HindsightMemory
from hindsight_lg.templates import TEMPLATES, load
from hindsight_lg.testing import FakeToolChatModel, echo_memories


def _model(name: str, module: Any) -> Any:
    if name == "support":
        return module.offline_model()
    return FakeToolChatModel(respond=echo_memories)


def _lessons(memory: HindsightMemory) -> list[str]:
    return [
        r.content
        for ns in memory.namespaces()
        for r in memory.list_memories(ns, history=True, kinds=["experience"])
    ]


def measure(name: str, turns: int) -> tuple[int, list[str]]:
    """Play template ``name`` for at least ``turns`` turns; (turns, lessons)."""
    module = load(name)
    played = 0
    with HindsightMemory.from_uri(":memory:", embedder="hashing") as memory:
        while played < turns:
            played += len(module.run(memory, _model(name, module), out=lambda _: None))
            memory.flush()
        return played, _lessons(memory)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--show", type=int, default=3)
    args = parser.parse_args()
    for name in TEMPLATES:
        played, lessons = measure(name, args.turns)
        rate = 100 * len(lessons) / played
        print(
            f"{name}: {len(lessons)} lessons in {played} turns = {rate:.1f}/100 turns"
        )
        for lesson in lessons[: args.show]:
            print(f"  - {lesson}")


if __name__ == "__main__":
    main()
