"""The causal long-chat protocol: ask each session's questions, then capture it.

Sessions are replayed in file order into a fresh engine whose clock reads
each session's start (where a file's dates step back, so does the clock). Before a session is captured its questions are asked of
memory holding the earlier sessions only, so neither a question nor its
answer is in the store when asked; the two hybrid baselines
(:mod:`.longchat_index`) hold the same earlier turns and rank with the same
embedder, within the same budget.

Per question and system: *evidence recall*, the share of its evidence turns
among the turns what came back was drawn from (a memory's ``source_ids``, a
baseline's turns); *answer coverage*, the share of the reply's content words
(less the question's) in the text the model would read (``to_prompt()``, the
baseline's lines); *point coverage*, the same for the text of the memory
points the reply needs; for a Dynamic Updating question with an updated and
an old value, whether the updated one came back ranked above the old one;
and what was injected (lines, tokens), reported on its own for questions no
earlier turn answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from hindsight_lg._text import approx_tokens
from hindsight_lg.bench.evaluate import answer_coverage, answer_words, evidence_recall
from hindsight_lg.bench.longchat import ChatQuery, ChatSession, LongChat
from hindsight_lg.bench.longchat_index import GrowingIndex, chunk_items, turn_items
from hindsight_lg.memory import HindsightMemory, RecallResult

SYSTEM = "hindsight"
TURNS = "hybrid-turns"
CHUNKS = "hybrid-chunks"
SYSTEMS = (SYSTEM, TURNS, CHUNKS)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True, slots=True)
class Shown:
    """What one system put before the model: the text, its lines, its turns in rank order."""

    text: str
    lines: int
    turns: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChatScore:
    """One system's measures on one question (``None``: not measurable there)."""

    chat: str
    query: str
    category: str
    system: str
    budget: int
    lines: int
    tokens: int
    recall: float | None = None
    coverage: float | None = None
    points: float | None = None
    updated: float | None = None
    found: tuple[str, ...] = ()


@dataclass(slots=True)
class ChatRun:
    """Every score of a run and what was replayed, per chat."""

    budget: int
    scores: list[ChatScore] = field(default_factory=list)
    sessions: dict[str, int] = field(default_factory=dict)
    turns: dict[str, int] = field(default_factory=dict)
    capture_seconds: float = 0.0
    recall_ms: list[float] = field(default_factory=list)


class SessionClock:
    """The engine's clock: the start of the session being replayed."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def updated_first(q: ChatQuery, turns: Sequence[str]) -> float | None:
    """1.0 when the updated value is shown and ranked above the old one, else 0.0.

    ``None`` for a question without both an updated and an old value.

    Example:
        >>> q = ChatQuery("q", "now?", "Dynamic Updating", "s3", updated=("b:1",),
        ...               old=("a:1",))
        >>> updated_first(q, ["b:1", "a:1"]), updated_first(q, ["a:1", "b:1"])
        (1.0, 0.0)
    """
    if not (q.updated and q.old):
        return None
    new = next((i for i, t in enumerate(turns) if t in q.updated), None)
    old = next((i for i, t in enumerate(turns) if t in q.old), None)
    return float(new is not None and (old is None or new < old))


def score(chat: str, q: ChatQuery, system: str, budget: int, shown: Shown) -> ChatScore:
    """The measures of one system's ``shown`` text and turns for ``q``."""
    tokens = approx_tokens(shown.text)
    if tokens > budget:
        raise AssertionError(f"{system} used {tokens} tokens of {budget}")
    return ChatScore(
        chat=chat,
        query=q.query_id,
        category=q.category,
        system=system,
        budget=budget,
        lines=shown.lines,
        tokens=tokens,
        recall=evidence_recall(q.evidence, shown.turns) if q.evidence else None,
        coverage=answer_coverage(answer_words(q.text, q.answer), shown.text),
        points=answer_coverage(answer_words(q.text, q.points), shown.text),
        updated=updated_first(q, shown.turns),
        found=shown.turns,
    )


def memory_shown(result: RecallResult) -> Shown:
    """A recall's prompt block, its lines and its source turns in rank order."""
    turns = [s for m in result.memories for s in m.record.source_ids]
    lines = sum(1 for m in result.memories if m.line)
    return Shown(result.to_prompt(), lines, tuple(dict.fromkeys(turns)))


def baseline_shown(index: GrowingIndex, question: str, budget: int) -> Shown:
    """A baseline's lines for ``question`` within ``budget``, and their turns."""
    items = index.retrieve(question, budget)
    text = "\n".join(it.line for it in items)
    turns = tuple(dict.fromkeys(it.turn_id for it in items))
    return Shown(text, len(items), turns)


class CausalReplay:
    """One chat through the protocol: ask a session's questions, then capture it.

    ``memory`` must be fresh and read ``clock``; the baselines' indexes start
    empty and grow with each captured session.
    """

    def __init__(
        self,
        chat: LongChat,
        memory: HindsightMemory,
        clock: SessionClock,
        indexes: tuple[GrowingIndex, GrowingIndex],
        run: ChatRun,
    ) -> None:
        self.chat = chat
        self.memory = memory
        self.clock = clock
        self.turns, self.chunks = indexes
        self.run = run
        self.namespace = f"longchat-{chat.name}"

    def __call__(self, progress: Progress | None = None) -> None:
        """Replay every session, scoring its questions before capturing it."""
        total = len(self.chat.sessions)
        for n, session in enumerate(self.chat.sessions, 1):
            self.clock.now = session.start
            for q in session.queries:
                self.ask(q)
            self.capture(session)
            if progress is not None:
                progress(f"{self.chat.name} sessions", n, total)
        self.run.sessions[self.chat.name] = total
        self.run.turns[self.chat.name] = len(self.chat.turns)

    def ask(self, q: ChatQuery) -> None:
        """Score every system on ``q`` against what is captured so far."""
        budget = self.run.budget
        start = time.perf_counter()
        result = self.memory.recall(
            q.text, namespace=self.namespace, budget_tokens=budget, timeout=None
        )
        self.run.recall_ms.append((time.perf_counter() - start) * 1000)
        shown = {
            SYSTEM: memory_shown(result),
            TURNS: baseline_shown(self.turns, q.text, budget),
            CHUNKS: baseline_shown(self.chunks, q.text, budget),
        }
        for system, what in shown.items():
            self.run.scores.append(score(self.chat.name, q, system, budget, what))

    def capture(self, session: ChatSession) -> None:
        """Capture ``session``'s turns into memory and into both baselines."""
        start = time.perf_counter()
        for turn in session.turns:
            if not turn.text:
                continue  # an empty turn (one persona has four) says nothing
            self.memory.capture(
                turn.text,
                namespace=self.namespace,
                speaker=turn.speaker,
                event_time=turn.event_time,
                source_ids=[turn.dia_id],
                thread_id=session.uuid,
            )
        self.run.capture_seconds += time.perf_counter() - start
        self.turns.add(turn_items(session.turns))
        self.chunks.add(chunk_items(session.turns))
