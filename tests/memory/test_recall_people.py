"""The dense path embeds a question without the names of the people it asks about."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg.backends import CachedBackend, Where
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.memory.language.people import as_the_user_says_it, without_people
from hindsight_lg.model import Status
from hindsight_lg.telemetry import RECALL_DENSE
from hindsight_lg.testing import FrozenClock, HashingEmbedder, capture_spans


@pytest.mark.parametrize(
    ("question", "names", "expected"),
    [
        ("What did Caroline research?", ["Caroline"], "What did research?"),
        ("What is Caroline's identity?", ["Caroline's"], "What is identity?"),
        ("How long has Mel been painting?", ["Mel"], "How long has been painting?"),
        (
            "When did Caroline and Melanie go to the park?",
            ["Caroline", "Melanie"],
            "When did and go to the park?",
        ),
        ("Where did we go in Paris last summer?", ["Paris"], None),
        ("What do I use Redis for?", ["Redis"], None),
        ("Who is Anna?", ["Anna"], None),
        (
            "Would Caroline have Dr. Seuss books?",
            ["Caroline", "Dr", "Seuss"],
            "Would have Dr. Seuss books?",
        ),
        ("小王的工作是什么？", ["小王"], None),
    ],
)
def test_a_name_leaves_the_question_only_as_its_subject_or_possessor(
    question: str, names: list[str], expected: str | None
) -> None:
    """People the question is about go; places, tools and bare names stay."""
    assert without_people(question, names) == (expected or question)


class _Recording(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return super().embed(texts)


@pytest.mark.parametrize(
    ("on", "embedded"), [(True, "What did research?"), (False, None)]
)
def test_the_dense_path_is_handed_the_question_without_its_people(
    clock: FrozenClock, on: bool, embedded: str | None
) -> None:
    """The policy switch decides whether the recall embeds the names."""
    embedder = _Recording()
    policy = Policy(dense_without_people=on)
    with HindsightMemory(InMemoryBackend(), embedder, clock=clock, policy=policy) as m:
        m.capture(
            "I'm researching adoption agencies.", namespace="u", speaker="Caroline"
        )
        embedder.texts.clear()
        m.recall("What did Caroline research?", namespace="u", timeout=None)
    assert (embedded or "What did Caroline research?") in embedder.texts


CHATTER = [
    ("Melanie", "I totally agree, Caroline."),
    ("Melanie", "That must have been tough for you, Caroline."),
    ("Melanie", "It was amazing, Caroline."),
]
FACT = ("Caroline", "I'm a transgender woman and proud of who I am.")


def _dense_scores(memory: HindsightMemory, ns: str) -> dict[str, float]:
    result = memory.recall(
        "What is Caroline's identity?", namespace=ns, explain=True, timeout=None
    )
    by_id = {r.id: r.content for r in memory.list_memories(ns)}
    assert result.explanation is not None
    return {
        by_id[i]: parts.get("dense", 0.0)
        for i, parts in result.explanation.items()
        if i in by_id
    }


@pytest.mark.parametrize("on", [True, False])
def test_chatter_that_names_a_person_no_longer_outscores_what_answers(
    milvus_pool: Any,
    minilm: Any,
    clock: FrozenClock,
    namespace: str,
    on: bool,
) -> None:
    """With MiniLM, a shared name outweighs meaning unless the name is left out."""
    backend = milvus_pool.get("minilm", dim=minilm.dim, model_id=minilm.model_id)
    policy = Policy(dense_without_people=on)
    with HindsightMemory(backend, minilm, clock=clock, policy=policy) as memory:
        for speaker, text in [*CHATTER, FACT]:
            memory.capture(text, namespace=namespace, speaker=speaker)
        dense = _dense_scores(memory, namespace)
    fact = dense.get(FACT[1], 0.0)
    chatter = max(dense.get(text, 0.0) for _, text in CHATTER)
    assert (fact > chatter) is on


@pytest.mark.parametrize(
    ("question", "cold_searches"),
    [("What did Caroline research?", 1), ("What did I research?", 0)],
)
def test_cold_memories_are_also_searched_with_a_named_question_whole(
    clock: FrozenClock, question: str, cold_searches: int
) -> None:
    """One more dense search, over cold memories only, when a person's name was left out."""
    with HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock) as m:
        m.capture(
            "I'm researching adoption agencies.", namespace="u", speaker="Caroline"
        )
        with capture_spans() as spans:
            m.recall(question, namespace="u", timeout=None)
    paths = [
        (s.attributes or {}).get("hindsight.path")
        for s in spans
        if s.name == RECALL_DENSE
    ]
    assert cold_searches == paths.count("dense-cold")


@pytest.mark.parametrize("cold", [False, True])
def test_the_cold_search_is_skipped_where_the_read_cache_holds_no_cold_memory(
    clock: FrozenClock, cold: bool
) -> None:
    """A read cache that holds the tenant and no cold memory in it saves that search."""
    cache = CachedBackend(InMemoryBackend())
    with HindsightMemory(cache, HashingEmbedder(), clock=clock) as m:
        m.capture(
            "I'm researching adoption agencies.", namespace="u", speaker="Caroline"
        )
        m.capture("I walked the dog in the rain.", namespace="u", speaker="Caroline")
        m.flush()
        if cold:
            first = cache.query("u", Where(statuses=()), limit=1)[0]
            cache.upsert("u", [first.replace(status=Status.COLD)])
        with capture_spans() as spans:
            m.recall("What did Caroline research?", namespace="u", timeout=None)
    paths = [
        (s.attributes or {}).get("hindsight.path")
        for s in spans
        if s.name == RECALL_DENSE
    ]
    assert (1 if cold else 0) == paths.count("dense-cold")
    assert cache.holds_cold("u") is cold
    assert cache.holds_cold("never-read") is True


@pytest.mark.parametrize(
    ("asked", "as_said"),
    [
        ("Where does the user live?", "Where do I live?"),
        ("What is the user's job? Remind the user.", "What is my job? Remind me."),
        ("Is the user vegetarian?", "Am I vegetarian?"),
        ("用户住在哪里？", "我住在哪里？"),
        ("user preferences for seats", "user preferences for seats"),
    ],
)
def test_a_question_about_the_user_is_put_as_the_user_says_it(
    asked: str, as_said: str
) -> None:
    """Agents ask about "the user"; memories are what the user said, in the first person."""
    assert as_said == as_the_user_says_it(asked)


def test_the_dense_path_asks_about_the_user_in_the_first_person(
    clock: FrozenClock,
) -> None:
    """ "Where does the user live?" is as close to "I live in Berlin" as "Where do I live?"."""

    def dense(policy: Policy, question: str) -> float:
        with HindsightMemory(
            InMemoryBackend(), HashingEmbedder(), clock=clock, policy=policy
        ) as m:
            m.capture("I live in Berlin.", namespace="u")
            result = m.recall(question, namespace="u", timeout=None, explain=True)
            assert result.explanation is not None
            (scores,) = result.explanation.values()
            return scores["dense"]

    first = dense(Policy(), "Where do I live?")
    assert first == pytest.approx(dense(Policy(), "Where does the user live?"))
    assert first > dense(Policy(dense_first_person=False), "Where does the user live?")
