"""Recall by association: through shared people and things, and through coreference.

"Where does my sister work?" is answered by a memory that never says
"sister": "Mei is a pediatric nurse at the West China hospital". Only the
memory that introduced her ("My sister Mei lives in Chengdu") ties the two:
recall reads the relation word as the name it was given, and diffusion runs
memory -> entity -> memory through the nodes of shared names.
"""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory, MemoryRecord, Policy
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.embeddings import FlagEmbeddingEmbedder, HashingEmbedder
from hindsight_lg.memory.language.encode import entities
from hindsight_lg.memory.language.relations import (
    Relation,
    relation_mentions,
    relations,
    substitute,
)
from hindsight_lg.memory.recall.result import resolve_names

HOUR = 3600.0
START = 1_700_000_000.0


def _captured(
    texts: list[str], embedder: object, policy: Policy | None = None
) -> HindsightMemory:
    memory = HindsightMemory(InMemoryBackend(), embedder, policy=policy)  # type: ignore[arg-type]
    for i, text in enumerate(texts):
        memory.capture(text, namespace="u", speaker="user", event_time=START + i * HOUR)
    return memory


def _ranked(memory: HindsightMemory, query: str) -> list[str]:
    result = memory.recall(query, namespace="u", timeout=None)
    return [m.record.content for m in result.memories]


FAMILY_EN = [
    "My sister Mei lives in Chengdu.",
    "My sister likes jasmine tea.",
    "Mei is a pediatric nurse at the West China hospital.",
    "My brother Tom works at a bank in London.",
    "I work as a designer at a small studio.",
    "I love hiking in the Harz mountains on weekends.",
]
FAMILY_ZH = [
    "我妹妹小美住在成都。",
    "我妹妹喜欢茉莉花茶。",
    "小美在华西医院工作，是儿科护士。",
    "我哥哥在银行工作。",
    "我周末喜欢去爬山。",
]


def test_a_name_introduced_with_a_relation_word_is_read_as_coreference() -> None:
    """The encoder ties "sister" to "Mei" in English and "妹妹" to "小美" in Chinese."""
    assert [Relation("sister", "my", "Mei")] == relations(FAMILY_EN[0])
    assert [Relation("妹妹", "my", "小美")] == relations(FAMILY_ZH[0])
    assert [Relation("dog", "my", "Biscuit")] == relations("My dog's name is Biscuit.")
    assert [Relation("狗", "my", "豆豆")] == relations("我的狗叫豆豆。")
    assert [Relation("husband", "Melanie", "John")] == relations(
        "Melanie's husband John loves sailing."
    )
    assert "小美" in entities(FAMILY_ZH[0])
    assert [] == relations("我妹妹今年在北京上学。")


def test_questions_name_the_relation_they_ask_about() -> None:
    """A question's relation words are found, and the name can stand in for them."""
    assert [Relation("sister", "my")] == relation_mentions("Where does my sister work?")
    assert [Relation("妹妹", "my")] == relation_mentions("我妹妹在哪里工作？")
    assert "Where does Mei work?" == substitute("Where does my sister work?", ["Mei"])
    assert "小美在哪里工作？" == substitute("我妹妹在哪里工作？", ["小美"])


def test_a_relation_resolves_through_whoever_said_it() -> None:
    """ "Melanie's husband" resolves through "my husband John" said by Melanie only."""
    said = MemoryRecord(
        namespace="u",
        content="My husband John fixed the boat.",
        participants=["Melanie"],
    )
    other = MemoryRecord(
        namespace="u", content="My husband Raj cooks.", participants=["Caroline"]
    )
    asked = relation_mentions("What does Melanie's husband do?")
    assert ["John"] == resolve_names(asked, [said, other])
    assert {"John", "Raj"} == set(
        resolve_names(relation_mentions("What does my husband do?"), [said, other])
    )


@pytest.mark.parametrize(
    ("texts", "query", "answer"),
    [
        (
            FAMILY_EN,
            "Where does my sister work?",
            "Mei is a pediatric nurse at the West China hospital.",
        ),
        (FAMILY_ZH, "我妹妹在哪里工作？", "小美在华西医院工作，是儿科护士。"),
    ],
    ids=["english", "chinese"],
)
def test_the_answer_reached_only_through_coreference_ranks_first(
    minilm: FlagEmbeddingEmbedder, texts: list[str], query: str, answer: str
) -> None:
    """The memory about "Mei" answers "my sister" first, above memories saying "sister"."""
    assert answer == _ranked(_captured(texts, minilm), query)[0]


def test_an_entity_shared_by_two_memories_links_them_in_two_hops() -> None:
    """query -> memory -> entity -> memory: a memory sharing no word is still reached."""
    texts = [
        "We are planning the Lisbon trip with Ana in June.",
        "Ana is allergic to shellfish.",
        "Shellfish prices went up at the market.",
        "The printer on the third floor is broken.",
    ]
    memory = _captured(texts, HashingEmbedder())
    result = memory.recall("What about the Lisbon trip?", namespace="u", timeout=None)
    by_text = {m.record.content: m for m in result.memories}
    assert by_text[texts[1]].paths.get("graph", 0.0) > 0
    assert texts[2] not in by_text or "graph" not in by_text[texts[2]].paths
    assert texts[1] == _ranked(memory, "What about the Lisbon trip?")[1]
    flat = _captured(texts, HashingEmbedder(), Policy(graph_hops=0, feedback_docs=0))
    assert texts[1] not in _ranked(flat, "What about the Lisbon trip?")


def test_two_hits_sharing_a_name_credit_each_other() -> None:
    """Both memories found by the query that share an entity get graph credit."""
    texts = ["Priya leads the billing migration.", "Priya reviews the billing report."]
    memory = _captured(texts, HashingEmbedder())
    result = memory.recall("billing", namespace="u", timeout=None)
    assert all(m.paths.get("graph", 0.0) > 0 for m in result.memories)


def test_a_name_mentioned_everywhere_spreads_thinly() -> None:
    """Activation leaving a hub entity is divided by its fan; a rare one links strongly."""
    hub = [f"Anna said something about topic {i}." for i in range(12)]
    texts = [
        "Anna and Bo planned the kayak trip.",
        "Bo bought a new paddle.",
        *hub,
    ]
    memory = _captured(texts, HashingEmbedder())
    result = memory.recall("kayak trip", namespace="u", explain=True, timeout=None)
    assert result.explanation is not None
    graph = {
        m.record.content: result.explanation[m.id].get("graph", 0.0)
        for m in result.memories
    }
    assert graph[texts[1]] > max(graph.get(t, 0.0) for t in hub)
