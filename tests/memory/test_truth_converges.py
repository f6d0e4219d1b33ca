"""Replays, restarts and several speakers converge on the last thing each one said."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.language.speech import speaker_of
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

SPEAKERS = ("user", "Maya", "Tom")
# Two subjects, each stated in English and in Chinese: a change of language
# is no change of subject ("我住在杭州" after "I live in Paris" is a move).
SUBJECTS = {
    "residence": (
        "I live in Paris.",
        "I live in Berlin.",
        "我住在杭州。",
        "我住在深圳。",
    ),
    "employer": (
        "I work at Google.",
        "I work at Stripe.",
        "我在腾讯上班。",
        "我在华为上班。",
    ),
}
CURRENT = ("active", "cold")


@dataclass(frozen=True)
class Say:
    speaker: str
    subject: str
    value: int


@dataclass(frozen=True)
class Replay:
    start: int
    stop: int
    keep_time: bool  # replayed with the original event_time


@dataclass(frozen=True)
class Restart:
    pass


says = st.builds(
    Say, st.sampled_from(SPEAKERS), st.sampled_from(sorted(SUBJECTS)), st.integers(0, 3)
)
ops = st.lists(
    st.one_of(
        says,
        says,
        st.builds(Replay, st.integers(0, 20), st.integers(0, 20), st.booleans()),
        st.just(Restart()),
    ),
    min_size=1,
    max_size=14,
)


def _text(say: Say) -> str:
    return SUBJECTS[say.subject][say.value]


class Life:
    """Plays the operations on one store, reopened at each restart."""

    def __init__(self) -> None:
        self.backend = InMemoryBackend()
        self.clock = FrozenClock()
        self.embedder = HashingEmbedder()
        self.memory = self._open()
        self.said: list[tuple[Say, str, float]] = []  # (statement, source id, time)
        self.last: dict[tuple[str, str], str] = {}

    def _open(self) -> HindsightMemory:
        return HindsightMemory(self.backend, self.embedder, clock=self.clock)

    def say(self, say: Say) -> None:
        source = f"m{len(self.said)}"
        self._capture(say, source, None)
        self.said.append((say, source, self.clock.now))
        self.last[(say.speaker.lower(), say.subject)] = _text(say)

    def replay(self, op: Replay) -> None:
        for say, source, when in self.said[op.start : op.stop]:
            self._capture(say, source, when if op.keep_time else None)

    def restart(self) -> None:
        self.memory.close()
        self.memory = self._open()

    def _capture(self, say: Say, source: str, when: float | None) -> None:
        self.clock.advance(seconds=3600)
        self.memory.capture(
            _text(say),
            namespace="group",
            speaker=say.speaker,
            source_ids=[source],
            event_time=when,
        )

    def current(self) -> list[MemoryRecord]:
        return [
            r
            for r in self.memory.list_memories("group", history=True)
            if r.status in CURRENT
        ]


def _subject_of(record: MemoryRecord) -> str:
    return next(s for s, texts in SUBJECTS.items() if record.content in texts)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops)
def test_each_speaker_has_one_current_version_per_subject_the_last_stated(
    plan: list[object],
) -> None:
    """Whatever is replayed and however often the store reopens, one version is current.

    For every subject a speaker has stated, exactly one memory is current and
    it says what that speaker said last; replays (the same words with the same
    source ids, with or without their original time) change nothing, and
    nobody's statement supersedes another speaker's.
    """
    life = Life()
    try:
        for op in plan:
            if isinstance(op, Say):
                life.say(op)
            elif isinstance(op, Replay):
                life.replay(op)
            else:
                life.restart()
        current: dict[tuple[str, str], list[str]] = {}
        for r in life.current():
            current.setdefault((speaker_of(r), _subject_of(r)), []).append(r.content)
        expected = {key: [text] for key, text in life.last.items()}
        assert expected == current
    finally:
        life.memory.close()
