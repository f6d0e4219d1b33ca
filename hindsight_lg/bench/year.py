"""A simulated year of one person's life, told in sessions, with weekly decay.

Each :class:`Persona` is a script: what a person says on which day of the
year. Some statements are about themselves and their people (facts,
preferences, relationships, plans, rules, things marked important): these
must still be recalled for a direct question at the end of the year. Some are
one-off questions and chit-chat: these must have faded. Some change an earlier
statement: the current one must come first and the old one must not stay
active. The year is played on one store that is closed and reopened between
seasons, with ``decay()`` every week as a scheduled job would run it and no
recall in between; on one day late in the year the whole script so far is run
again (a replay: the same sessions on the same store).

``tests/memory/test_year.py`` asserts on it; ``benchmarks/year_simulation.py``
prints the counts.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hindsight_lg.backends import MemoryBackend
from hindsight_lg.embeddings import Embedder
from hindsight_lg.memory import HindsightMemory
from hindsight_lg.model import MemoryRecord, Status

DAY = 86400.0
#: 2025-01-06T09:00Z, a Monday: day 0 of every simulated year.
YEAR_START = 1_736_154_000.0
SEASONS = (0, 91, 182, 273)


class Clock:
    """The simulation's clock: "now" is whatever the script set."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass(frozen=True, slots=True)
class Keep:
    """A statement that must survive the year: recalled for ``question``.

    ``key`` is a piece of the statement's text that identifies its memory.
    """

    day: int
    text: str
    question: str
    key: str


@dataclass(frozen=True, slots=True)
class Fade:
    """A one-off question or chit-chat that must have faded by the end."""

    day: int
    text: str
    key: str


@dataclass(frozen=True, slots=True)
class Change:
    """A change of mind: ``new`` (on ``day``) replaces ``old`` (on ``old_day``)."""

    old_day: int
    old: str
    day: int
    new: str
    question: str
    old_key: str
    new_key: str


@dataclass(frozen=True, slots=True)
class Persona:
    """One person's year: what is kept, what fades, what changes, what is replayed."""

    name: str
    keeps: tuple[Keep, ...]
    fades: tuple[Fade, ...]
    changes: tuple[Change, ...] = ()
    #: The day the script so far is run again, in order, on the same store
    #: (old opinions, then their changes): it must converge, not duplicate.
    replay: int | None = None

    def said_on(self, day: int) -> list[str]:
        """What the person says on ``day``, in script order."""
        if day == self.replay:
            return [line for d in self.days() if d < day for line in self._said(d)]
        return self._said(day)

    def _said(self, day: int) -> list[str]:
        lines = [k.text for k in self.keeps if k.day == day]
        lines += [f.text for f in self.fades if f.day == day]
        lines += [c.old for c in self.changes if c.old_day == day]
        lines += [c.new for c in self.changes if c.day == day]
        return lines

    def days(self) -> list[int]:
        """The days on which the person says something."""
        found = {k.day for k in self.keeps} | {f.day for f in self.fades}
        found |= {c.old_day for c in self.changes} | {c.day for c in self.changes}
        if self.replay is not None:
            found.add(self.replay)
        return sorted(found)


MAYA = Persona(
    name="maya",
    keeps=(
        Keep(
            3,
            "My name is Maya and I work as a nurse at St. Mary's hospital.",
            "What do I do for a living?",
            "nurse",
        ),
        Keep(
            3,
            "My sister Lena lives in Toronto with her two kids.",
            "Where does my sister Lena live?",
            "Toronto",
        ),
        Keep(10, "I'm allergic to peanuts.", "Am I allergic to anything?", "peanuts"),
        Keep(
            24,
            "I prefer tea over coffee, especially jasmine tea.",
            "Do I prefer tea or coffee?",
            "jasmine",
        ),
        Keep(
            40,
            "My husband Tom's birthday is on the 12th of August.",
            "When is Tom's birthday?",
            "12th of August",
        ),
        Keep(
            95,
            "Always keep your answers short, I read them on my phone.",
            "How should answers be written for me?",
            "answers short",
        ),
        Keep(
            130,
            "I'm planning a trip to Japan with Tom in October.",
            "What trip am I planning?",
            "Japan",
        ),
        Keep(
            190,
            "Please remember that my son Leo is afraid of dogs, it's important.",
            "What is Leo afraid of?",
            "afraid of dogs",
        ),
    ),
    fades=(
        Fade(3, "What's the weather in Paris tomorrow?", "weather in Paris"),
        Fade(10, "haha that's so funny", "so funny"),
        Fade(
            24, "The coffee machine on our ward broke again today lol", "coffee machine"
        ),
        Fade(95, "How many ounces are in a cup?", "ounces"),
        Fade(130, "Can you tell me a joke about cats?", "joke about cats"),
        Fade(190, "ugh Mondays, am I right", "Mondays"),
        Fade(240, "What time is it in Sydney right now?", "Sydney"),
    ),
    changes=(
        Change(
            17,
            "I take the 7:40 train to work every morning.",
            150,
            "Actually I cycle to work now instead of taking the train.",
            "How do I get to work?",
            "7:40 train",
            "cycle to work",
        ),
        Change(
            45,
            "I don't like Redis for caching.",
            200,
            "Actually Redis is fine for caching now.",
            "What do I think about Redis for caching?",
            "don't like Redis",
            "Redis is fine",
        ),
    ),
    replay=250,
)

WEI = Persona(
    name="wei",
    keeps=(
        Keep(2, "我叫王伟，是一名软件工程师。", "我是什么工程师？", "软件工程师"),
        Keep(2, "我女儿叫小雨，今年六岁。", "我女儿叫什么名字？", "小雨"),
        Keep(12, "我对花生过敏。", "我对什么过敏？", "花生"),
        Keep(33, "我喜欢喝绿茶。", "我喜欢喝什么茶？", "绿茶"),
        Keep(100, "我妈妈的生日是十月五号。", "我妈妈的生日是哪天？", "十月五号"),
        Keep(160, "我打算明年春天去云南旅行。", "我打算去哪里旅行？", "云南"),
        Keep(205, "以后都用中文回答我。", "你应该用什么语言回答我？", "中文回答"),
    ),
    fades=(
        Fade(2, "帮我查一下明天北京的天气", "北京的天气"),
        Fade(12, "哈哈哈太好笑了", "太好笑"),
        Fade(33, "今天地铁好挤啊", "地铁好挤"),
        Fade(100, "一公里等于多少英里？", "英里"),
        Fade(160, "给我讲个笑话吧", "笑话"),
        Fade(230, "现在几点了？", "几点"),
    ),
    changes=(
        Change(
            20,
            "我住在杭州。",
            170,
            "其实我现在住在深圳了。",
            "我现在住在哪里？",
            "杭州",
            "深圳",
        ),
    ),
    replay=260,
)

PERSONAS = (MAYA, WEI)


@dataclass(slots=True)
class Outcome:
    """What the year left: per statement, recalled or faded, and the ranks."""

    persona: str
    kept: dict[str, bool] = field(default_factory=dict)
    kept_status: dict[str, str] = field(default_factory=dict)
    faded: dict[str, str] = field(default_factory=dict)
    current_first: dict[str, bool] = field(default_factory=dict)
    stale_active: dict[str, int] = field(default_factory=dict)
    # Stale statements left cold rather than superseded: a direct question
    # could still wake them.
    stale_cold: dict[str, int] = field(default_factory=dict)
    statuses: dict[str, int] = field(default_factory=dict)

    @property
    def kept_count(self) -> int:
        return sum(self.kept.values())

    @property
    def faded_count(self) -> int:
        return sum(status != "active" for status in self.faded.values())


Opener = Callable[[Clock], HindsightMemory]


def lite_opener(folder: str | Path, embedder: Embedder) -> Opener:
    """Open the simulation's Milvus Lite file in ``folder`` (no spool)."""
    uri = str(Path(folder) / "year.db")

    def open_memory(clock: Clock) -> HindsightMemory:
        return HindsightMemory.from_uri(
            uri, embedder=embedder, clock=clock, spool=None, warm_up=False
        )

    return open_memory


def shared_opener(backend: MemoryBackend, embedder: Embedder) -> Opener:
    """Open a new engine on one backend each season (the backend stays open).

    The fast variant of :func:`lite_opener`: an in-memory backend outlives the
    engines built on it, so a "restart" drops every in-process cache and
    memo of the engine but not the store.
    """

    def open_memory(clock: Clock) -> HindsightMemory:
        return HindsightMemory(backend, embedder, clock=clock)

    return open_memory


def play(
    persona: Persona,
    open_memory: Opener,
    *,
    namespace: str | None = None,
    reopen: bool = True,
    decay_every: int = 7,
    days: int = 365,
) -> Outcome:
    """Play ``persona``'s year and question the memory at its end."""
    ns = namespace or persona.name
    clock = Clock(YEAR_START)
    talk = set(persona.days())
    memory = open_memory(clock)
    try:
        for day in range(days + 1):
            clock.now = YEAR_START + day * DAY
            if reopen and day in SEASONS[1:]:
                memory.close()
                memory = open_memory(clock)
            if day in talk:
                for i, text in enumerate(persona.said_on(day)):
                    memory.capture(
                        text,
                        namespace=ns,
                        thread_id=f"{persona.name}-{day}",
                        event_time=clock.now + i,
                    )
            if day and day % decay_every == 0:
                memory.decay(ns)
        return question(persona, memory, ns)
    finally:
        memory.close()


def question(persona: Persona, memory: HindsightMemory, namespace: str) -> Outcome:
    """Ask the year's direct questions; see where each statement ended up."""
    out = Outcome(persona.name)
    rows = memory.list_memories(namespace, history=True, limit=10_000)
    for row in rows:
        out.statuses[row.status.value] = out.statuses.get(row.status.value, 0) + 1
    for keep in persona.keeps:
        top = _top(memory, keep.question, namespace)
        out.kept[keep.key] = any(keep.key in r.content for r in top)
        out.kept_status[keep.key] = _liveliest(
            [r for r in rows if keep.key in r.content]
        )
    for fade in persona.fades:
        found = [r for r in rows if fade.key in r.content]
        out.faded[fade.key] = _liveliest(found)
    for change in persona.changes:
        top = _top(memory, change.question, namespace)
        first = next(
            (
                r
                for r in top
                if change.new_key in r.content or change.old_key in r.content
            ),
            None,
        )
        out.current_first[change.new_key] = (
            first is not None and change.new_key in first.content
        )
        stale = [
            r
            for r in rows
            if change.old_key in r.content and change.new_key not in r.content
        ]
        out.stale_active[change.old_key] = sum(r.status is Status.ACTIVE for r in stale)
        out.stale_cold[change.old_key] = sum(r.status is Status.COLD for r in stale)
    return out


def _top(memory: HindsightMemory, query: str, namespace: str) -> list[MemoryRecord]:
    result = memory.recall(query, namespace=namespace, k=3, timeout=None)
    return result.records


def _liveliest(records: list[MemoryRecord]) -> str:
    """The most available status among ``records`` (``"missing"`` when none)."""
    order = ("active", "cold", "archived", "superseded", "deleted")
    statuses = sorted((r.status.value for r in records), key=order.index)
    return statuses[0] if statuses else "missing"


@contextmanager
def lite_folder() -> Iterator[str]:
    """A temporary folder for one simulation's Milvus Lite file."""
    with tempfile.TemporaryDirectory(prefix="hindsight-year-") as folder:
        yield folder


def summary(outcomes: list[Outcome]) -> list[dict[str, Any]]:
    """One row of counts per persona, for printing."""
    return [
        {
            "persona": o.persona,
            "kept": f"{o.kept_count}/{len(o.kept)}",
            "faded": f"{o.faded_count}/{len(o.faded)}",
            "current first": f"{sum(o.current_first.values())}/{len(o.current_first)}",
            "stale active": sum(o.stale_active.values()),
            "stale cold": sum(o.stale_cold.values()),
            "statuses": dict(sorted(o.statuses.items())),
        }
        for o in outcomes
    ]
