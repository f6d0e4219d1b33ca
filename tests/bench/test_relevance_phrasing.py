"""The relevance figures kept apart per phrasing, on the phrasing sets' format."""

from __future__ import annotations

import json
from pathlib import Path

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.bench.relevance import evaluate, evaluate_by, load_set
from hindsight_lg.testing import HashingEmbedder

PHRASING = Path(__file__).parents[2] / "benchmarks" / "data" / "phrasing"


def _set(tmp_path: Path) -> Path:
    users = [
        {
            "name": "ana",
            "memories": ["I live in Porto by the river.", "I play the cello."],
            "questions": [
                {"q": "Where do I live?", "answers": ["Porto"], "phrasing": "first"},
                {"q": "user home city", "answers": ["Porto"], "phrasing": "tool"},
                {"q": "user blood type", "answers": [], "phrasing": "tool"},
            ],
        }
    ]
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"about": "", "users": users}), encoding="utf-8")
    return path


def test_figures_split_by_phrasing_add_up_to_the_whole(tmp_path: Path) -> None:
    """Each phrasing gets its own questions, and together they are the whole set."""
    users = load_set(_set(tmp_path))
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        parts = evaluate_by(users, memory, lambda q: q.phrasing)
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        whole = evaluate(users, memory)
    assert sorted(parts) == ["first", "tool"]
    assert (len(parts["first"].recall), len(parts["tool"].recall)) == (1, 1)
    assert len(parts["tool"].unanswered_lines) == 1
    merged = parts["first"]
    merged.extend(parts["tool"])
    assert sorted(merged.recall) == sorted(whole.recall)


def test_the_phrasing_sets_label_every_question_with_one_memory_per_answer() -> None:
    """Every question has a phrasing and each answer names exactly one memory."""
    for name in ("frozen.json", "dev.json"):
        users = load_set(PHRASING / name)
        for u in users:
            for q in u.questions:
                assert q.phrasing, q.text
                for a in q.answers:
                    assert sum(a in m for m in u.memories) == 1, (q.text, a)
