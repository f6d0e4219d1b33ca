"""The long-chat bench end to end: a fresh engine per chat, scores saved as it goes."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from hindsight_lg._files import make_dirs, replace_private
from hindsight_lg._text import split_events
from hindsight_lg.bench._cache import CachedEmbedder
from hindsight_lg.bench.baselines import render_turn
from hindsight_lg.bench.longchat import LongChat, load_longchats
from hindsight_lg.bench.longchat_eval import (
    CausalReplay,
    ChatRun,
    ChatScore,
    Progress,
    SessionClock,
)
from hindsight_lg.bench.longchat_index import GrowingIndex, chunk_items
from hindsight_lg.bench.runner import tuned_policy
from hindsight_lg.embeddings import Embedder, embedder_from_name
from hindsight_lg.memory import HindsightMemory, Policy

_WARM_BATCH = 256


@dataclass(frozen=True, slots=True)
class LongChatConfig:
    """What a long-chat run replays and measures, and where it writes."""

    data: Path
    # None: every chat found in ``data``.
    personas: tuple[str, ...] | None = None
    # None: every session; N: the first N sessions of each chat.
    sessions: int | None = None
    budget: int = 500
    embedder: str = "minilm"
    out: Path = Path("bench-out/longchat")
    cache: bool = True
    # Policy fields set for this run; empty: recall's defaults.
    policy: tuple[tuple[str, Any], ...] = ()


def run_longchat(
    cfg: LongChatConfig,
    progress: Progress | None = None,
    after: Callable[[ChatRun], object] | None = None,
) -> ChatRun:
    """Replay each chat through the causal protocol; ``after`` runs after each one.

    Raises:
        FileNotFoundError, ValueError: as :func:`~.longchat.load_longchats`,
            or a bad ``--policy`` field.
    """
    policy = tuned_policy(cfg.policy)
    chats = load_longchats(cfg.data, cfg.personas, cfg.sessions)
    # Beside LoCoMo's cache, not in it: two benches never rewrite one file.
    cache = cfg.out.parent / "cache" / "longchat" if cfg.cache else None
    embedder = CachedEmbedder(embedder_from_name(cfg.embedder), cache)
    run = ChatRun(budget=cfg.budget)
    for chat in chats:
        warm(embedder, chat, progress)
        embedder.save()
        replay_chat(chat, embedder, policy, run, progress)
        embedder.save()
        save_scores(cfg.out, run)
        if after is not None:
            after(run)
    return run


def replay_chat(
    chat: LongChat,
    embedder: Embedder,
    policy: Policy,
    run: ChatRun,
    progress: Progress | None = None,
) -> None:
    """One chat into a fresh in-memory engine and fresh baselines, scored into ``run``."""
    from hindsight_lg.backends import InMemoryBackend

    clock = SessionClock()
    memory = HindsightMemory(InMemoryBackend(), embedder, policy=policy, clock=clock)
    indexes = (GrowingIndex(embedder), GrowingIndex(embedder))
    try:
        # What an app does after building memory by hand: the first recall
        # then measures recall, not the loading of its readers.
        memory.warm_up()
        CausalReplay(chat, memory, clock, indexes, run)(progress)
    finally:
        memory.close()


def warm(
    embedder: CachedEmbedder, chat: LongChat, progress: Progress | None = None
) -> None:
    """Embed in large batches what capture and the baselines embed one turn at a time."""
    turns = [t for t in chat.turns if t.text]
    events = {t.dia_id: split_events(t.text) for t in turns}
    # Capture embeds a turn's events, and the whole turn (``speaker: text``)
    # as their context when there are several, or as a question the next
    # turn answers (cut to 1,000 characters); a whole turn's bare text only
    # when it is one event. Long replies are many events: warming their bare
    # text would embed the longest texts for nothing.
    texts = [t.text for t in turns if len(events[t.dia_id]) <= 1]
    texts += [render_turn(t) for t in turns]
    texts += [f"{t.speaker}: {t.text[:1000]}" for t in turns]
    texts += [s for t in turns for s in events[t.dia_id]]
    texts += [it.line for it in chunk_items(turns)]
    unique = list(dict.fromkeys(texts))
    for start in range(0, len(unique), _WARM_BATCH):
        embedder.warm(unique[start : start + _WARM_BATCH])
        if progress is not None:
            done = min(start + _WARM_BATCH, len(unique))
            progress(f"{chat.name} embeddings", done, len(unique))
    questions = list(dict.fromkeys(q.text for q in chat.queries))
    for start in range(0, len(questions), _WARM_BATCH):
        embedder.embed_queries(questions[start : start + _WARM_BATCH])


def save_scores(folder: Path, run: ChatRun) -> None:
    """``scores.json`` and ``replayed.json`` in ``folder`` (after every chat)."""
    make_dirs(folder)
    scores = [asdict(s) for s in run.scores]
    replace_private(folder / "scores.json", json.dumps(scores).encode())
    replayed: dict[str, Any] = {
        "budget": run.budget,
        "sessions": run.sessions,
        "turns": run.turns,
        "capture_seconds": run.capture_seconds,
        "recall_ms": run.recall_ms,
    }
    replace_private(folder / "replayed.json", json.dumps(replayed).encode())


def load_scores(folders: Sequence[Path]) -> ChatRun:
    """Earlier runs' scores (``scores.json``, ``replayed.json``) as one run.

    Lets chats run in parallel processes and be reported together.

    Raises:
        ValueError: the runs used different budgets.
    """
    runs = [_load(folder) for folder in folders]
    budgets = {r.budget for r in runs}
    if len(budgets) != 1:
        raise ValueError(f"runs with different budgets cannot merge: {sorted(budgets)}")
    merged = ChatRun(budget=budgets.pop())
    for r in runs:
        merged.scores += r.scores
        merged.sessions.update(r.sessions)
        merged.turns.update(r.turns)
        merged.capture_seconds += r.capture_seconds
        merged.recall_ms += r.recall_ms
    return merged


def _load(folder: Path) -> ChatRun:
    rows = json.loads((folder / "scores.json").read_text(encoding="utf-8"))
    replayed = json.loads((folder / "replayed.json").read_text(encoding="utf-8"))
    scores = [ChatScore(**{**row, "found": tuple(row["found"])}) for row in rows]
    return ChatRun(
        budget=int(replayed["budget"]),
        scores=scores,
        sessions=dict(replayed["sessions"]),
        turns=dict(replayed["turns"]),
        capture_seconds=float(replayed["capture_seconds"]),
        recall_ms=[float(ms) for ms in replayed.get("recall_ms", [])],
    )
