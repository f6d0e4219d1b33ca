"""Run LoCoMo: memory and the baselines on the same turns, embedder and budgets.

Two measures per question, system and budget. *Evidence recall*: the share of
the question's evidence turns among what came back (a memory counts for each
turn it was drawn from). *Answer coverage*: the share of the gold answer's
content words (the engine's stemmed terms, stop words dropped, minus the
question's own words) present in the text the model would read:
``RecallResult.to_prompt()`` for memory, the rendered turns for a baseline.
Evidence recall credits a whole turn for any fragment of it; coverage only
counts what is shown. Adversarial questions (category 5) have no gold answer
in the file and questions whose answer adds no word to the question have
nothing to cover: neither gets a coverage score.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hindsight_lg._text import approx_tokens, split_events, terms
from hindsight_lg.bench.baselines import BASELINES, RawTurnIndex
from hindsight_lg.bench.locomo import Conversation, Question, replay
from hindsight_lg.embeddings import Embedder

SYSTEM = "hindsight"
ADVERSARIAL = 5
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Score:
    """Evidence recall and answer coverage of one system, question and budget.

    ``coverage`` is ``None`` where the question has nothing to cover (see the
    module docstring).
    """

    conversation: int
    category: int
    system: str
    budget: int
    recall: float
    items: int
    tokens: int
    coverage: float | None = None


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


def answer_words(question: str, answer: str) -> set[str]:
    """The answer's content words a reader needs: its terms minus the question's.

    Example:
        >>> sorted(answer_words("Where does Ann work?", "At the Lisbon zoo, Ann says"))
        ['lisbon', 'say', 'zoo']
    """
    return set(terms(answer)) - set(terms(question))


def answer_coverage(wanted: set[str], text: str) -> float | None:
    """Share of ``wanted`` terms present in ``text`` (``None`` when nothing is wanted).

    Example:
        >>> answer_coverage({"zoo", "lisbon"}, "- Ann: I feed lions at the zoo")
        0.5
    """
    if not wanted:
        return None
    have = set(terms(text))
    return sum(w in have for w in wanted) / len(wanted)


def gold_words(q: Question) -> set[str]:
    """What answer coverage looks for in ``q`` (nothing for adversarial questions)."""
    if q.category == ADVERSARIAL:
        return set()
    return answer_words(q.text, q.answer)


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
        prompt = result.to_prompt()
        tokens = approx_tokens(prompt)
        if tokens > budget:
            raise AssertionError(f"memory used {tokens} tokens of {budget}")
        recall = evidence_recall(q.evidence, _memory_sources(result))
        covered = answer_coverage(gold_words(q), prompt)
        run.scores.append(
            Score(
                conv, q.category, SYSTEM, budget, recall, len(result), tokens, covered
            )
        )


def _score_baselines(index: RawTurnIndex, q: Question, conv: int, run: Run) -> None:
    for system in BASELINES:
        ranking = index.rank(system, q.text)
        for budget in run.budgets:
            ids = index.retrieve(ranking, budget)
            text = "\n".join(index.lines[i] for i in ids)
            tokens = approx_tokens(text)
            recall = evidence_recall(q.evidence, ids)
            covered = answer_coverage(gold_words(q), text)
            run.scores.append(
                Score(
                    conv, q.category, system, budget, recall, len(ids), tokens, covered
                )
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


MEASURES = ("recall", "coverage")


def table(
    scores: Sequence[Score],
    budget: int,
    conversations: Sequence[int] | None = None,
    measure: str = "recall",
) -> dict[str, dict[str, float]]:
    """Mean ``measure`` (``recall`` or ``coverage``) by system, per category and overall.

    Questions without a value for the measure (coverage of adversarial
    questions) are left out of its means and of ``questions``.
    """
    from hindsight_lg.bench.locomo import CATEGORIES

    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; one of {MEASURES}")
    wanted = set(conversations) if conversations is not None else None
    rows = [
        s
        for s in scores
        if s.budget == budget
        and (wanted is None or s.conversation in wanted)
        and getattr(s, measure) is not None
    ]
    out: dict[str, dict[str, float]] = {}
    for system in (SYSTEM, *BASELINES):
        mine = [s for s in rows if s.system == system]
        if not mine:
            continue
        value = {id(s): float(getattr(s, measure)) for s in mine}
        cells = {
            name: statistics.fmean(value[id(s)] for s in mine if s.category == cat)
            for cat, name in CATEGORIES.items()
            if any(s.category == cat for s in mine)
        }
        cells["overall"] = statistics.fmean(value.values())
        cells["questions"] = float(len(mine))
        cells["items"] = statistics.fmean(s.items for s in mine)
        cells["tokens"] = statistics.fmean(s.tokens for s in mine)
        out[system] = cells
    return out
