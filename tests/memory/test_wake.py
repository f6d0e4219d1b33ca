"""Cold memories wake for a direct question, by a rule measured on the embedder."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory, Policy, Status
from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.embeddings import FlagEmbeddingEmbedder
from hindsight_lg.memory.recall.calibration import PAIRS, measure
from hindsight_lg.memory.recall.relevance import rule_for as relevance_rule
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.memory.recall.scoring import rank_order, score
from hindsight_lg.memory.recall.wake import boosted, rule_for, wakes
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

TOLD = [
    "My sister Lena lives in Toronto with her two kids.",
    "I'm allergic to peanuts.",
    "I prefer jasmine tea over coffee.",
    "我女儿叫小雨，今年六岁。",
    "我对花生过敏。",
]


def _cold_store(memory: HindsightMemory, clock: FrozenClock, ns: str) -> None:
    for text in TOLD:
        memory.capture(text, namespace=ns)
    clock.advance(days=300)
    memory.decay(ns)
    assert {r.status for r in memory.list_memories(ns, history=True)} == {Status.COLD}


@pytest.fixture
def minilm_memory_in_ram(
    minilm: FlagEmbeddingEmbedder, clock: FrozenClock
) -> HindsightMemory:
    backend = InMemoryBackend()
    backend.setup(dim=minilm.dim, model_id=minilm.model_id)
    return HindsightMemory(backend, minilm, clock=clock)


def test_the_floors_sit_above_the_embedders_unrelated_pairs(
    minilm: FlagEmbeddingEmbedder,
) -> None:
    """Each script's floor is mu + 2.33 sigma of its unrelated pairs, per embedder."""
    for embedder in (minilm, HashingEmbedder()):
        spread = measure(embedder)
        rule = rule_for(spread, Policy(cold_wake_false_rate=0.01))
        # Each script, and each script's questions against the other's memories.
        crossed = {f"{a}>{b}" for a in PAIRS for b in PAIRS if a != b}
        assert rule.unrelated is not None and set(rule.floors) == set(PAIRS) | crossed
        for script, (mu, sigma) in rule.unrelated.items():
            assert rule.floors[script] == pytest.approx(mu + 2.3263 * sigma, abs=2e-3)
    # MiniLM tells Chinese sentences apart far worse than English ones.
    minilm_rule = rule_for(measure(minilm), Policy())
    assert minilm_rule.floors["cjk"] > minilm_rule.floors["latin"] + 0.3


def test_wake_and_relevance_share_one_measurement_at_their_own_false_rates() -> None:
    """A stricter false rate gives a higher floor; both rules read one spread."""
    spread = measure(HashingEmbedder())
    loose = Policy(cold_wake_false_rate=0.05, relevance_false_rate=0.05)
    strict = Policy(cold_wake_false_rate=0.001, relevance_false_rate=0.001)
    for script in PAIRS:
        low, high = rule_for(spread, loose), rule_for(spread, strict)
        assert low.floors[script] < high.floors[script]
        low_r, high_r = relevance_rule(spread, loose), relevance_rule(spread, strict)
        assert (low_r.floors[script], high_r.floors[script]) == (
            low.floors[script],
            high.floors[script],
        )


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where does my sister Lena live?", "Toronto"),
        ("Am I allergic to anything?", "peanuts"),
        ("Do I drink tea or coffee?", "jasmine"),
        ("我女儿叫什么名字？", "小雨"),
        ("我对什么过敏？", "花生"),
    ],
)
def test_a_direct_question_wakes_its_cold_memory_with_minilm(
    minilm_memory_in_ram: HindsightMemory,
    clock: FrozenClock,
    namespace: str,
    question: str,
    answer: str,
) -> None:
    """With every memory cold, a direct question still gets its answer first."""
    _cold_store(minilm_memory_in_ram, clock, namespace)
    result = minilm_memory_in_ram.recall(question, namespace=namespace, timeout=None)
    assert result.memories and answer in result.records[0].content


def test_a_question_nothing_bears_on_wakes_nothing(
    minilm_memory_in_ram: HindsightMemory, clock: FrozenClock, namespace: str
) -> None:
    """An unrelated question leaves cold memories asleep, and explain says why."""
    _cold_store(minilm_memory_in_ram, clock, namespace)
    result = minilm_memory_in_ram.recall(
        "What is the capital of Peru?", namespace=namespace, explain=True, timeout=None
    )
    assert result.memories == []
    assert result.wake and all(r.startswith("not woken") for r in result.wake.values())
    assert all(result.cut[i].startswith("cold, not woken") for i in result.wake)


def test_explain_says_which_path_woke_a_memory(
    backend: MemoryBackend, hashing: HashingEmbedder, clock: FrozenClock, namespace: str
) -> None:
    """A woken memory's reason names its path, score, floor and the best hit."""
    with HindsightMemory(backend, hashing, clock=clock) as memory:
        _cold_store(memory, clock, namespace)
        result = memory.recall(
            "Where does Lena live?", namespace=namespace, explain=True, timeout=None
        )
    top = result.memories[0]
    assert "Toronto" in top.record.content and top.record.status is Status.COLD
    assert result.wake[top.id].startswith("woken: ")
    assert "floor" in result.wake[top.id] and "x best" in result.wake[top.id]


def test_a_fixed_similarity_in_the_policy_replaces_the_measured_floor(
    clock: FrozenClock, namespace: str
) -> None:
    """policy.cold_wake_similarity set to a number is the floor for every script."""
    policy = Policy(cold_wake_similarity=0.99, lexical_score_floor=1e9)
    with HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), policy=policy, clock=clock
    ) as memory:
        assert memory.wake_rule.floors == {"latin": 0.99, "cjk": 0.99}
        _cold_store(memory, clock, namespace)
        result = memory.recall(
            "Where does Lena live?", namespace=namespace, timeout=None
        )
    assert result.memories == []


def test_a_top_hit_must_also_be_near_the_best() -> None:
    """Clearing the floor is not enough: the hit must reach the share of the best."""
    assert wakes(0.5, 0.9, 0.3, 0.9)[0] is False
    assert wakes(0.85, 0.9, 0.3, 0.9)[0] is True


def test_a_woken_memory_ranks_first_with_a_score_of_at_most_one() -> None:
    """The wake boost lifts a cold memory above active ones; its score stays in 0-1."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), clock=FrozenClock())
    [tea] = memory.capture("I prefer jasmine tea over coffee.", namespace="u")
    memory.capture("I prefer green tea in the afternoon.", namespace="u")
    memory.update("u", tea.id, status=Status.COLD)
    found = memory.recall(
        "I prefer jasmine tea over coffee.", namespace="u", timeout=None, explain=True
    )
    assert tea.id == found.ids[0]
    assert [] == [m.score for m in found.memories if not 0.0 <= m.score <= 1.0]
    assert found.explanation is not None
    shown = found.explanation[tea.id]
    assert 1.0 == pytest.approx(shown["score"])
    assert 1.0 < shown["wake"] < Policy().cold_wake_boost


def test_woken_memories_capped_at_one_keep_the_order_of_their_boost() -> None:
    """Two woken memories that both reach 1 rank as their boosted scores did."""
    policy, now = Policy(), 1_700_000_000.0

    def candidate(text: str, dense: float, woken: bool) -> Candidate:
        record = MemoryRecord("u", text, importance=0.8, event_time=now)
        return Candidate(record, paths={"dense": dense}, woken=woken)

    # Contents in the other order: a tie at 1.0 broken by content would flip them.
    pool = [candidate("a weaker", 0.8, True), candidate("b stronger", 0.9, True)]
    pool.append(candidate("c active", 0.95, False))
    scores = [score(c, policy, now) for c in pool]
    assert [1.0, 1.0] == scores[:2] and scores[2] < 1.0
    order = [c.record.content for c in sorted(pool, key=rank_order)]
    assert ["b stronger", "a weaker", "c active"] == order


def test_the_boost_caps_at_one() -> None:
    """boosted() returns the shown score, capped at 1, and the uncapped rank."""
    assert ((0.6, 0.6), (1.0, 1.5)) == (boosted(0.3, 2.0), boosted(0.75, 2.0))
