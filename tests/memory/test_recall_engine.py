"""Recall by association: paths, scoring, time windows, graph hops, budgets, timeouts."""

from __future__ import annotations

import time
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg import Edge, EdgeType, HindsightMemory, Kind, MemoryRecord, Policy
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.memory.recall.result import Candidate, size_k
from hindsight_lg.memory.recall.scoring import score
from hindsight_lg.testing import FrozenClock, HashingEmbedder

NOW = 1_700_000_000.0
DAY = 86400.0


def _candidate(**changes: object) -> Candidate:
    record = MemoryRecord(
        namespace="u", content="x", event_time=NOW - 10 * DAY, importance=0.5
    )
    return Candidate(record.replace(**changes), paths={"dense": 0.5, "lexical": 0.5})


@given(st.floats(0, 300), st.floats(0.1, 300))
def test_a_newer_memory_never_ranks_lower(age_days: float, extra: float) -> None:
    """With all else equal, the more recent memory scores at least as high."""
    policy = Policy()
    newer = _candidate(event_time=NOW - age_days * DAY)
    older = _candidate(event_time=NOW - (age_days + extra) * DAY)
    assert score(newer, policy, NOW) >= score(older, policy, NOW)


@given(st.floats(0, 0.9), st.floats(0.01, 0.1))
def test_a_more_important_memory_never_ranks_lower(
    importance: float, more: float
) -> None:
    """With all else equal, the more important memory scores at least as high."""
    policy = Policy()
    low, high = (
        _candidate(importance=importance),
        _candidate(importance=importance + more),
    )
    assert score(high, policy, NOW) >= score(low, policy, NOW)


def test_k_is_sized_to_the_query() -> None:
    """Short questions get fewer memories than planning questions; explicit k wins."""
    assert size_k("tea?", None) < size_k(
        "help me plan the trip to Lisbon in June", None
    )
    assert size_k("anything", 3) == 3


def test_multi_hop_answer_reached_only_through_an_edge(clock: FrozenClock) -> None:
    """A memory sharing no words with the query is recalled through a causal edge."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    trip = memory.remember(
        "Maya is flying to Lisbon for her sister's wedding",
        namespace="u",
        kind=Kind.TASK,
    )
    gift = memory.remember(
        "Bought a silver teapot as a present", namespace="u", kind=Kind.EVENT
    )
    for i in range(20):
        memory.remember(
            f"Unrelated note number {i} about gardening tools",
            namespace="u",
            kind=Kind.FACT,
        )
    query = "what did I prepare for the Lisbon wedding?"
    before = memory.recall(query, namespace="u", k=3, timeout=None)
    memory.backend.add_edges("u", [Edge("u", trip.id, gift.id, EdgeType.CAUSES, 0.9)])
    after = memory.recall(query, namespace="u", k=3, timeout=None)
    assert gift.id not in before.ids
    assert gift.id in after.ids
    assert after.memories[after.ids.index(gift.id)].paths["graph"] > 0


def test_feedback_reaches_a_memory_through_the_best_hits_words(
    clock: FrozenClock,
) -> None:
    """A memory sharing no words with the query is found through the top hit's."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    memory.remember("Maya adopted a puppy named Biscuit", namespace="u")
    chewed = memory.remember("Biscuit chewed the sofa cushions", namespace="u")
    for i in range(20):
        memory.remember(f"Unrelated note {i} on gardening tools", namespace="u")
    query = "what pet did Maya adopt?"
    found = memory.recall(query, namespace="u", k=5, timeout=None)
    assert chewed.id in found.ids
    assert found.memories[found.ids.index(chewed.id)].paths["feedback"] > 0
    off = HindsightMemory(
        InMemoryBackend(),
        HashingEmbedder(),
        policy=Policy(feedback_docs=0),
        clock=clock,
    )
    off.remember("Maya adopted a puppy named Biscuit", namespace="u")
    assert (
        "feedback"
        not in off.recall(query, namespace="u", timeout=None).memories[0].paths
    )


def test_time_expressions_select_memories_from_that_window() -> None:
    """ "in May 2023" favours what happened in May 2023 over a closer text match."""
    clock = FrozenClock(datetime(2023, 9, 1, tzinfo=UTC).timestamp())
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    may = datetime(2023, 5, 12, tzinfo=UTC).timestamp()
    july = datetime(2023, 7, 3, tzinfo=UTC).timestamp()
    [in_may] = memory.capture(
        "Went to a pottery class with Anna", namespace="u", event_time=may
    )
    [in_july] = memory.capture(
        "Went to a pottery class with Anna again, loved it",
        namespace="u",
        event_time=july,
    )
    result = memory.recall(
        "what did I do in May 2023?", namespace="u", explain=True, timeout=None
    )
    assert result.ids[0] == in_may.id
    assert result.explanation is not None
    assert (
        result.memories[0].paths["time"] == 1.0
        and "time" not in result.explanation[in_july.id]
    )


def test_cold_memories_wake_only_on_a_close_match(clock: FrozenClock) -> None:
    """A cold memory is recalled (boosted) for a near-identical query, not a loose one."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    [r] = memory.capture("My passport number ends with 4471", namespace="u")
    memory.update("u", r.id, status="cold")
    loose = memory.recall("travel documents", namespace="u", timeout=None)
    close = memory.recall(
        "My passport number ends with 4471", namespace="u", timeout=None
    )
    assert r.id not in loose.ids
    assert close.ids == [r.id]


def test_unverified_experience_stays_out_until_confirmed(clock: FrozenClock) -> None:
    """An experience lesson is hidden until reinforced enough, unless asked for."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    lesson = memory.remember(
        "Check the weather before planning hikes",
        namespace="u",
        kind=Kind.EXPERIENCE,
        confidence=0.6,
    )
    hidden = memory.recall("planning hikes weather", namespace="u", timeout=None)
    asked = memory.recall(
        "planning hikes weather", namespace="u", timeout=None, include_experience=True
    )
    memory.reinforce("u", [lesson.id])
    memory.reinforce("u", [lesson.id])
    confirmed = memory.recall("planning hikes weather", namespace="u", timeout=None)
    assert (
        lesson.id in hidden.ids,
        lesson.id in asked.ids,
        lesson.id in confirmed.ids,
    ) == (False, True, True)


def test_budget_is_respected_and_lines_are_annotated(clock: FrozenClock) -> None:
    """The rendered block fits the budget; each line names kind, date, confidence, id."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    for i in range(40):
        memory.remember(
            f"Fact {i}: the project Falcon milestone {i} is about search",
            namespace="u",
            kind=Kind.FACT,
        )
    result = memory.recall(
        "Falcon milestone search",
        namespace="u",
        budget_tokens=200,
        k=40,
        explain=True,
        timeout=None,
    )
    prompt_tokens = -(-len(result.to_prompt()) // 4)
    assert 0 < len(result) < 40 and prompt_tokens <= 200
    assert "over budget" in result.cut.values()
    line = result.memories[0].line
    assert line.startswith("- [fact · ") and "conf 1.0" in line
    assert result.memories[0].id[:8] in line
    assert "current conversation wins" in result.to_prompt()


def test_explain_reports_per_path_contributions(clock: FrozenClock) -> None:
    """explain=True gives each candidate's path scores and final score."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    memory.capture("I love hiking in the Harz mountains", namespace="u")
    result = memory.recall("hiking Harz", namespace="u", explain=True, timeout=None)
    detail = result.explanation or {}
    first = detail[result.ids[0]]
    assert {"dense", "lexical", "score", "similarity"} <= set(first)
    assert (
        first["score"] == result.memories[0].score
        or abs(first["score"] - result.memories[0].score) < 1e-3
    )


class _SlowBackend(InMemoryBackend):
    def search_dense(self, *args: object, **kwargs: object):  # type: ignore[no-untyped-def]
        time.sleep(0.5)
        return super().search_dense(*args, **kwargs)  # type: ignore[arg-type]


def test_a_recall_past_its_deadline_returns_empty(clock: FrozenClock) -> None:
    """A slow store makes recall return an empty, timed-out result, not raise."""
    memory = HindsightMemory(_SlowBackend(), HashingEmbedder(), clock=clock)
    memory.capture("I love hiking", namespace="u")
    result = memory.recall("hiking", namespace="u", timeout=0.05)
    assert (result.ids, result.timed_out, result.to_prompt()) == ([], True, "")


def test_other_agents_private_memories_stay_hidden(clock: FrozenClock) -> None:
    """A private memory of agent A is not recalled for agent B; team memory is."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    [private] = memory.capture(
        "The launch code word is heron", namespace="u", agent_id="a"
    )
    [team] = memory.capture(
        "The launch date is Friday", namespace="u", agent_id="a", scope="team"
    )
    seen_by_b = memory.recall(
        "launch code word date", namespace="u", agent_id="b", timeout=None
    )
    assert private.id not in seen_by_b.ids and team.id in seen_by_b.ids


def test_an_emotion_in_the_query_probes_past_feelings(clock: FrozenClock) -> None:
    """'stressed' in the query finds an earlier stressed memory through its own path."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    [felt] = memory.capture("I'm so stressed about the launch", namespace="u")
    memory.capture("The office plants need watering", namespace="u")
    result = memory.recall("feeling stressed again today", namespace="u", timeout=None)
    assert result.ids[0] == felt.id and result.memories[0].paths["emotion"] > 0


class _ReverseReranker:
    """Prefers the passage the formula ranked last: proves the reranker is applied."""

    model_id = "reverse"

    def score(self, query: str, passages: list[str]) -> list[float]:
        return [float(i) / len(passages) for i in range(len(passages))]


def test_a_reranker_reorders_the_head(clock: FrozenClock) -> None:
    """With a reranker, the cross-encoder's scores join the ranking and show as a path."""
    plain = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=clock)
    ranked = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=clock, reranker=_ReverseReranker()
    )
    for memory in (plain, ranked):
        memory.remember(
            "Tea with lemon every morning", namespace="u", kind="preference"
        )
        memory.remember("Green tea in the afternoon", namespace="u", kind="preference")
    before = plain.recall("tea", namespace="u", timeout=None)
    after = ranked.recall("tea", namespace="u", timeout=None)
    contents = [[m.record.content for m in r.memories] for r in (before, after)]
    assert contents[0] == contents[1][::-1]
    assert all("rerank" in m.paths for m in after.memories)


def test_feedback_runs_with_every_hit_lending_its_words(clock: FrozenClock) -> None:
    """feedback_min_share=0 lets every top hit lend words; feedback still runs."""
    texts = [
        "We are planning the Lisbon trip with Ana in June.",
        *(f"Ana mentioned hobby number {i}." for i in range(6)),
        "The printer on the third floor is broken.",
    ]
    for share in (0.0, 0.5):
        memory = HindsightMemory(
            InMemoryBackend(),
            HashingEmbedder(),
            policy=Policy(feedback_min_share=share),
            clock=clock,
        )
        for text in texts:
            memory.capture(text, namespace="u", speaker="user")
        result = memory.recall("Lisbon trip", namespace="u", explain=True, timeout=None)
        assert result.explanation is not None
        assert any("feedback" in paths for paths in result.explanation.values()), share


def test_the_pool_is_deeper_than_the_reranked_head(clock: FrozenClock) -> None:
    """Each path adds up to candidates_per_path (80) memories to the pool; a reranker
    re-scores only the best rerank_candidates (30) of them."""
    memory = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=clock, reranker=_ReverseReranker()
    )
    for i in range(120):
        memory.remember(f"Tea note {i}: oolong at {i} degrees", namespace="u")
    result = memory.recall(
        "tea", namespace="u", budget_tokens=20000, explain=True, timeout=None
    )
    assert result.explanation is not None
    policy = Policy()
    assert len(result.explanation) >= policy.candidates_per_path == 80
    reranked = sum("rerank" in paths for paths in result.explanation.values())
    assert reranked == policy.rerank_candidates == 30
