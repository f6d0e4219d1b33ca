"""Run LoCoMo: memory and the baselines on the same turns, embedder and budgets."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hindsight_lg._text import approx_tokens, split_events
from hindsight_lg.bench.baselines import BASELINES, RawTurnIndex
from hindsight_lg.bench.locomo import Conversation, Question, replay
from hindsight_lg.embeddings.base import Embedder

SYSTEM = "hindsight"
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Score:
    """Evidence recall of one system on one question at one budget."""

    conversation: int
    category: int
    system: str
    budget: int
    recall: float
    items: int
    tokens: int


@dataclass(slots=True)
class Run:
    """Every score of a run, plus what the run measured along the way."""

    budgets: tuple[int, ...]
    scores: list[Score] = field(default_factory=list)
    capture_seconds: float = 0.0
    turns: int = 0
    recall_ms: list[float] = field(default_factory=list)


def evidence_recall(evidence: Sequence[str], found: Sequence[str]) -> float:
    """Share of ``evidence`` turn ids present in ``found``.

    Example:
        >>> evidence_recall(["D1:1", "D2:3"], ["D2:3", "D9:9"])
        0.5
    """
    if not evidence:
        raise ValueError("a question without evidence cannot be scored")
    got = set(found)
    return sum(e in got for e in evidence) / len(evidence)


def _memory_sources(result: Any) -> list[str]:
    # A memory covering several turns counts for each of them.
    return [s for m in result.memories for s in m.record.source_ids]


def _score_memory(
    memory: Any, q: Question, ns: str, conv: int, run: Run, k: int | None
) -> None:
    for budget in run.budgets:
        start = time.perf_counter()
        result = memory.recall(
            q.text, namespace=ns, budget_tokens=budget, k=k, timeout=None
        )
        run.recall_ms.append((time.perf_counter() - start) * 1000)
        tokens = approx_tokens(result.to_prompt())
        if tokens > budget:
            raise AssertionError(f"memory used {tokens} tokens of {budget}")
        recall = evidence_recall(q.evidence, _memory_sources(result))
        run.scores.append(
            Score(conv, q.category, SYSTEM, budget, recall, len(result), tokens)
        )


def _score_baselines(index: RawTurnIndex, q: Question, conv: int, run: Run) -> None:
    for system in BASELINES:
        ranking = index.rank(system, q.text)
        for budget in run.budgets:
            ids = index.retrieve(ranking, budget)
            tokens = approx_tokens("\n".join(index.lines[i] for i in ids))
            recall = evidence_recall(q.evidence, ids)
            run.scores.append(
                Score(conv, q.category, system, budget, recall, len(ids), tokens)
            )


def evaluate_conversation(
    conv: Conversation,
    memory: Any,
    embedder: Embedder,
    run: Run,
    *,
    k: int | None = None,
    limit: int | None = None,
    turns: int | None = None,
    progress: Progress | None = None,
) -> None:
    """Replay one conversation into ``memory`` and score every question with evidence.

    ``limit`` keeps the first questions; ``turns`` replays only the first turns
    and keeps the questions whose evidence lies within them (smoke runs).
    """
    if turns is not None:
        conv = _truncated(conv, turns)
    ns = f"locomo-{conv.index}"
    _warm(embedder, conv)
    start = time.perf_counter()
    replay(memory, conv, ns, None if progress is None else _phase(progress, "capture"))
    run.capture_seconds += time.perf_counter() - start
    run.turns += len(conv.turns)
    index = RawTurnIndex(conv.turns, embedder)
    questions = [q for q in conv.questions if q.evidence][:limit]
    for n, q in enumerate(questions, 1):
        _score_memory(memory, q, ns, conv.index, run, k)
        _score_baselines(index, q, conv.index, run)
        if progress is not None:
            progress("recall", n, len(questions))


def _truncated(conv: Conversation, turns: int) -> Conversation:
    kept = conv.turns[:turns]
    ids = {t.dia_id for t in kept}
    questions = [q for q in conv.questions if q.evidence and set(q.evidence) <= ids]
    return Conversation(conv.sample_id, conv.index, kept, questions)


def _warm(embedder: Embedder, conv: Conversation) -> None:
    # Capture embeds one turn at a time; a cache can take the same texts in
    # large batches first (whole turns, their sentences, the questions).
    warm = getattr(embedder, "warm", None)
    if warm is None:
        return
    texts = [t.text for t in conv.turns] + [q.text for q in conv.questions]
    texts += [s for t in conv.turns for s in split_events(t.text)]
    texts += [f"{t.speaker}: {t.text}" for t in conv.turns]
    warm(list(dict.fromkeys(texts)))


def _phase(progress: Progress, name: str) -> Callable[[int, int], None]:
    return lambda n, total: progress(name, n, total)


def table(
    scores: Sequence[Score], budget: int, conversations: Sequence[int] | None = None
) -> dict[str, dict[str, float]]:
    """Mean evidence recall by system, per category name and ``overall``."""
    from hindsight_lg.bench.locomo import CATEGORIES

    wanted = set(conversations) if conversations is not None else None
    rows = [
        s
        for s in scores
        if s.budget == budget and (wanted is None or s.conversation in wanted)
    ]
    out: dict[str, dict[str, float]] = {}
    for system in (SYSTEM, *BASELINES):
        mine = [s for s in rows if s.system == system]
        if not mine:
            continue
        cells = {
            name: statistics.fmean(s.recall for s in mine if s.category == cat)
            for cat, name in CATEGORIES.items()
            if any(s.category == cat for s in mine)
        }
        cells["overall"] = statistics.fmean(s.recall for s in mine)
        cells["questions"] = float(len(mine))
        cells["items"] = statistics.fmean(s.items for s in mine)
        cells["tokens"] = statistics.fmean(s.tokens for s in mine)
        out[system] = cells
    return out
