"""The write path: turn -> events -> embed -> merge or supersede -> edges -> audit.

:class:`Writer` does the first half (a turn becomes events, records and
their vectors); its :class:`~.placing.Placer` the second (merge, supersede
or insert, edges, audit).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from hindsight_lg import telemetry
from hindsight_lg._text import clean, summarize
from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.embeddings.base import Embedder
from hindsight_lg.memory.capture.conflicts import (
    SLOT_KEY,
)
from hindsight_lg.memory.capture.placing import Placer
from hindsight_lg.memory.capture.prefetch import TenantPrefetch
from hindsight_lg.memory.capture.turns import (
    Placement,
    Turn,
    capped,
    kept_turns,
    rest_of_turn,
    turn_text,
)
from hindsight_lg.memory.capture.vectors import embed_records
from hindsight_lg.memory.language.encode import (
    EventDraft,
    Extraction,
    Extractor,
    extract,
)
from hindsight_lg.memory.language.slots import read
from hindsight_lg.memory.policy import Policy
from hindsight_lg.model import (
    CONTEXT_KEY,
    TURN_KEY,
    AuditEntry,
    Kind,
    MemoryRecord,
    Scope,
    SourceKind,
    Tier,
    observe_id,
)

# The previous turn blended into an event's vector is cut to this length, and
# only the most recently active threads keep theirs.
_CONTEXT_CHARS = 1000
_THREADS_KEPT = 10_000
# A context plan's stand-in for "the mean of the turn's own events".
_SENTENCES = ""


class Writer:
    """Runs the write pipeline for one memory engine.

    Args:
        placer: places the records in the store (merge, supersede, insert),
            within the capture's batch.
        embedder: embeds events (the engine's ``EmbeddingMemo``).
        policy: thresholds and seeds.
        extractor: reads events out of a turn; the heuristics by default.
        prefetch: warms the read cache for a capture's tenant while it encodes.
    """

    def __init__(
        self,
        placer: Placer,
        embedder: Embedder,
        policy: Policy,
        extractor: Extractor | None = None,
        *,
        prefetch: TenantPrefetch | None = None,
    ) -> None:
        self.placer = placer
        self.embedder = embedder
        self.policy = policy
        self.extractor = extractor or (
            lambda t, s, ts: extract(t, speaker=s, ref_time=ts)
        )
        self._previous_turn: dict[tuple[str, str, str, str], Turn] = {}
        self.prefetch = prefetch

    @property
    def backend(self) -> MemoryBackend:
        """The store, or this thread's staging view of it inside :meth:`batch`."""
        return self.placer.backend

    def batch(
        self, namespace: str = "", capture_id: str | None = None
    ) -> AbstractContextManager[None]:
        """Buffer the block's writes; see :meth:`Placer.batch <.placing.Placer.batch>`."""
        return self.placer.batch(namespace, capture_id)

    def capture_turns(
        self, turns: Sequence[Turn], where: Placement, *, when: float, now: float
    ) -> list[MemoryRecord]:
        """Encode every turn, embed all kept events in one call, then place them.

        One embedding call for the whole capture is what makes batches cheap:
        model calls cost per call far more than per sentence.
        """
        if self.prefetch is not None:  # the tenant loads while the turns encode
            self.prefetch.warm([where.namespace])
        limit = self.policy.max_content_chars
        # Cap first: splitting and context blending cost per character, and a
        # 10 MB turn would otherwise be split whole before being cut.
        turns = [capped(turn, limit) for turn in turns]
        # Assistant replies are not facts about the user (see kept_turns).
        kept = kept_turns(turns, self._previous_turn.get(_thread_key(where)))
        encoded = [
            self._encode(t, when) if ok else (t, Extraction(events=[]), [], False)
            for t, ok in zip(turns, kept, strict=True)
        ]
        asked = self._questions_answered(turns, where)
        vectors = self._event_vectors(encoded, asked)
        written: list[MemoryRecord] = []
        offset = 0
        for (turn, extraction, keep, truncated), question in zip(
            encoded, asked, strict=True
        ):
            if not keep:
                self._observe(where, turn, now)
                continue
            mine = vectors[offset : offset + len(keep)]
            offset += len(keep)
            records = [
                self.new_record(
                    d,
                    namespace=where.namespace,
                    agent_id=where.agent_id,
                    scope=where.scope,
                    thread_id=where.thread_id,
                    event_time=when,
                    now=now,
                    turn=turn,
                    vector=v,
                    truncated=truncated,
                    question=question,
                )
                for d, v in zip(keep, mine, strict=True)
            ]
            causes = _kept_causes(extraction, keep)
            with telemetry.memory_span(telemetry.WRITE, count=len(records)):
                written += self.placer.write(where.namespace, records, causes, now)
        return written

    def _event_vectors(
        self,
        encoded: Sequence[tuple[Turn, Extraction, list[EventDraft], bool]],
        asked: Sequence[Turn | None],
    ) -> list[list[float]]:
        """One vector per kept event, in order, from a single embedding call.

        A sentence split from a conversation loses what it leaves implicit:
        "They loved it!" says neither who nor what, and an answer rarely
        repeats its question. Each event's vector is therefore blended with
        its whole turn's (``Policy.context_weight``, when the turn was split)
        and with the question the turn answers (``asked``, weighted by
        ``Policy.previous_weight``), so recall finds the sentence by its
        context too. Stored content stays the sentence itself.
        """
        texts = [d.content for _, _, keep, _ in encoded for d in keep]
        if not texts:
            return []
        plans = [
            self._context_plan(turn, keep, question)
            for (turn, _, keep, _), question in zip(encoded, asked, strict=True)
        ]
        extra = list(dict.fromkeys(t for plan in plans for t, _ in plan if t))
        vectors = np.asarray(self._embed(texts + extra), dtype=np.float32)
        context = {t: vectors[len(texts) + i] for i, t in enumerate(extra)}
        events = vectors[: len(texts)]
        offset = 0
        for (_, _, keep, _), plan in zip(encoded, plans, strict=True):
            mine = events[offset : offset + len(keep)]
            # A long turn's own vector is its events' mean (_SENTENCES).
            if any(text == _SENTENCES for text, _ in plan):
                context[_SENTENCES] = _unit(mine.mean(axis=0))
            for text, weight in plan:
                mine += weight * context[text]
            if plan:
                mine /= np.linalg.norm(mine, axis=1, keepdims=True)
            offset += len(keep)
        return [list(map(float, v)) for v in events]

    def forget_turns(self, namespace: str) -> None:
        """Drop the remembered last turns of ``namespace``'s threads."""
        # list() copies at once: captures of other namespaces insert meanwhile.
        for key in [k for k in list(self._previous_turn) if k[0] == namespace]:
            del self._previous_turn[key]

    def _context_plan(
        self, turn: Turn, keep: list[EventDraft], question: Turn | None
    ) -> list[tuple[str, float]]:
        """The context texts to blend into a turn's events, with their weights."""
        plan: list[tuple[str, float]] = []
        p = self.policy
        if len(keep) > 1 and p.context_weight > 0:
            whole = turn_text(turn)
            long = len(whole) > p.context_pass_chars
            plan.append((_SENTENCES if long else whole, p.context_weight))
        if keep and question is not None and self.policy.previous_weight > 0:
            plan.append((turn_text(question), self.policy.previous_weight))
        return plan

    def _questions_answered(
        self, turns: Sequence[Turn], where: Placement
    ) -> list[Turn | None]:
        """For each turn, the thread's turn before it when that one asked a question.

        The thread's last turn is remembered across captures (per namespace
        and thread, the most recently active threads only), so a reply
        captured on its own still knows what it answers.
        """
        # Keyed by who may see the records too: a private turn never becomes
        # the context of a team or global memory of the same thread.
        key = _thread_key(where)
        previous = self._previous_turn.get(key) if where.thread_id else None
        out, previous = self.answered(turns, previous)
        if where.thread_id and previous is not None:
            self._previous_turn.pop(key, None)  # re-inserted last: least recent first
            self._previous_turn[key] = previous
            while len(self._previous_turn) > _THREADS_KEPT:
                self._previous_turn.pop(next(iter(self._previous_turn)))
        return out

    @staticmethod
    def answered(
        turns: Sequence[Turn], previous: Turn | None
    ) -> tuple[list[Turn | None], Turn | None]:
        """The question each turn answers (after ``previous``), and the last turn."""
        out: list[Turn | None] = []
        for turn in turns:
            out.append(previous if previous and "?" in previous.text else None)
            text = turn.text[:_CONTEXT_CHARS]
            previous = Turn(text, turn.speaker, [], turn.source_kind)
        return out, previous

    def last_turn(self, key: tuple[str, str, str, str]) -> Turn | None:
        """The last turn captured in a thread (keyed as ``_thread_key``), if kept."""
        return self._previous_turn.get(key)

    def texts_of(self, turn: Turn, when: float, question: Turn | None) -> list[str]:
        """What capturing a kept ``turn`` embeds: its events, then its context."""
        extraction, _ = self.drafts(turn, when)
        keep = [d for d in extraction.events if d.salience >= self.policy.min_salience]
        plan = self._context_plan(turn, keep, question)
        return [d.content for d in keep] + [text for text, _ in plan if text]

    def _encode(
        self, turn: Turn, when: float
    ) -> tuple[Turn, Extraction, list[EventDraft], bool]:
        with telemetry.memory_span(
            telemetry.ENCODE, speaker=turn.speaker, source_ids=turn.source_ids
        ) as span:
            extraction, truncated = self.drafts(turn, when)
            keep = [
                d for d in extraction.events if d.salience >= self.policy.min_salience
            ]
            span.set_attribute("hindsight.events", len(extraction.events))
            span.set_attribute("hindsight.kept", len(keep))
            span.set_attribute("hindsight.kinds", [d.kind.value for d in keep])
        return turn, extraction, keep, truncated

    def _embed(self, texts: list[str]) -> list[list[float]]:
        with telemetry.memory_span(
            telemetry.EMBED,
            kind=telemetry.EMBEDDING,
            **telemetry.embedding_attributes(self.embedder.model_id, texts),
        ):
            return embed_records(self.embedder, texts)

    def _observe(self, where: Placement, turn: Turn, now: float) -> None:
        # Below the salience floor: the raw turn stays in the audit trail (and
        # the thread), and the capture span says what was left out. Keyed by
        # its thread, so forgetting the thread finds it.
        detail = {"content": turn.text[:2000], "source_ids": turn.source_ids}
        key = observe_id(where.thread_id) if where.thread_id else ""
        entry = AuditEntry(where.namespace, key, "observe", now, detail)
        self.backend.append_audit(where.namespace, [entry])
        telemetry.collect("not_promoted", turn.text[:200])

    def drafts(self, turn: Turn, event_time: float) -> tuple[Extraction, bool]:
        """Extract events of a turn; returns them and whether the text was truncated."""
        text, truncated = clean(turn.text, max_chars=self.policy.max_content_chars)
        truncated = truncated or turn.truncated
        if not text:
            return Extraction(events=[]), truncated
        extraction = self.extractor(text, turn.speaker, event_time)
        for d in extraction.events:
            if turn.source_kind is SourceKind.AGENT_INFERRED:
                d.source_kind = SourceKind.AGENT_INFERRED
                d.salience = round(max(0.0, d.salience - 0.15), 3)
        return extraction, truncated

    def new_record(
        self,
        d: EventDraft,
        *,
        namespace: str,
        agent_id: str,
        scope: Scope,
        thread_id: str,
        event_time: float,
        now: float,
        turn: Turn,
        vector: list[float],
        truncated: bool,
        question: Turn | None = None,
    ) -> MemoryRecord:
        """A record for a draft, with the policy's seeds for its kind."""
        record = MemoryRecord(
            namespace=namespace,
            content=d.content,
            kind=d.kind,
            agent_id=agent_id,
            scope=scope,
            tier=Tier.PROCEDURAL if d.kind is Kind.RULE else Tier.EPISODIC,
            summary=summarize(d.content),
            dense=vector,
            event_time=event_time,
            created_at=now,
            importance=self.policy.importance(d.kind),
            confidence=0.6 if d.source_kind is SourceKind.USER_SPECULATION else 1.0,
            half_life_days=self.policy.half_life(d.kind),
            participants=d.participants,
            entities=d.entities,
            goal=d.goal,
            action=d.action,
            emotion=d.emotion,
            source_kind=d.source_kind,
            thread_id=thread_id,
            source_ids=list(turn.source_ids),
            salience=d.salience,
            mentioned_time=d.mentioned_time,
        )
        if self.policy.lexical_context:
            # Searched by the lexical paths with the event's own words (see
            # store._index.record_text), never shown: "They loved it!" is found
            # by "dinosaur exhibit" said in the same turn, an answer by the
            # words of the question it answers.
            parts = [rest_of_turn(turn.text, d.content)]
            parts += [question.text] if question is not None else []
            context = " ".join(p for p in parts if p)
            if context:
                record.meta[CONTEXT_KEY] = context[: 2 * _CONTEXT_CHARS]
        if " ".join(d.content.split()) != " ".join(turn.text.split()):
            # Shown around the event at recall (recall.lines.turn_window): the
            # words that answer are often in the sentence beside it.
            record.meta[TURN_KEY] = turn.text[: 2 * _CONTEXT_CHARS]
        if truncated:
            record.meta["truncated"] = True
        if d.is_update:
            record.meta["is_update"] = True
        if (reading := read(d.content)) is not None:
            record.meta[SLOT_KEY] = reading.slot
        return record


def _unit(v: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norm = float(np.linalg.norm(v))
    return v / norm if norm > 0 else v


def _thread_key(where: Placement) -> tuple[str, str, str, str]:
    return (where.namespace, where.thread_id, where.agent_id, where.scope.value)


def _kept_causes(
    extraction: Extraction, keep: list[EventDraft]
) -> list[tuple[int, int]]:
    """Causal links of the extraction re-indexed to the kept events."""
    index = {id(d): i for i, d in enumerate(keep)}
    events = extraction.events
    return [
        (index[id(events[a])], index[id(events[b])])
        for a, b in extraction.causes
        if id(events[a]) in index and id(events[b]) in index
    ]
