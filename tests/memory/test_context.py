"""Conversation context in recall: the turn, the question answered, the speaker."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory, MemoryRecord, Policy
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.embeddings import FlagEmbeddingEmbedder
from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.memory.recall.result import Candidate, build_probe, mark_speakers
from hindsight_lg.memory.recall.scoring import similarity
from hindsight_lg.testing import FrozenClock, HashingEmbedder

TURNS = [
    (
        "Melanie",
        "I finally finished that cookbook you lent me, I learned to bake bread.",
    ),
    ("Caroline", "Nice! I've been reading a lot lately too."),
    ("Melanie", "Have you read Becoming Nicole yet? What did you take away from it?"),
    (
        "Caroline",
        "It taught me self-acceptance and how to find support. "
        "Pets bring so much joy too, honestly.",
    ),
    ("Melanie", "My kids started a new book club at school and they love it."),
    ("Caroline", "Reading with friends is a great way to learn from each other."),
    ("Melanie", "The library near us has a great selection of novels about family."),
    ("Caroline", "I want to read more memoirs this year, they move me."),
]
QUESTION = "What did Caroline take away from the book Becoming Nicole?"
ANSWER = "It taught me self-acceptance and how to find support."


def _rank_of_answer(memory: HindsightMemory) -> int:
    for speaker, text in TURNS:
        memory.capture(text, namespace="u", speaker=speaker, thread_id="t1")
    result = memory.recall(QUESTION, namespace="u", k=10, budget_tokens=2000)
    contents = [m.record.content for m in result.memories]
    # Absent ranks below every line: without context nothing may vouch for it.
    return contents.index(ANSWER) if ANSWER in contents else len(TURNS)


def test_an_answer_is_found_through_the_question_before_it(
    minilm: FlagEmbeddingEmbedder,
) -> None:
    """The answer never names the book; its question does, and lifts it."""
    plain = Policy(context_weight=0.0, previous_weight=0.0, lexical_context=False)
    without = _rank_of_answer(
        HindsightMemory(InMemoryBackend(), minilm, clock=FrozenClock(), policy=plain)
    )
    with_context = _rank_of_answer(
        HindsightMemory(InMemoryBackend(), minilm, clock=FrozenClock())
    )
    assert (with_context < without, with_context <= 2) == (True, True), (
        with_context,
        without,
    )


def test_stored_content_stays_the_sentence(minilm_memory: HindsightMemory) -> None:
    """Context shapes the vector only: each event keeps its own words (Milvus Lite)."""
    rank = _rank_of_answer(minilm_memory)
    contents = {r.content for r in minilm_memory.list_memories("u")}
    assert (rank <= 2, ANSWER in contents, TURNS[3][1] in contents) == (
        True,
        True,
        False,
    )


def test_memories_of_a_person_the_query_names_are_marked() -> None:
    """The speaker signal is set for what the named person said, whatever the case."""
    said = [
        Candidate(MemoryRecord(namespace="u", content=c, participants=[p]))
        for c, p in (("pottery calms me", "melanie"), ("running calms me", "Jon"))
    ]
    mark_speakers(said, build_probe("How does Melanie relax?", now=0.0))
    assert [c.paths.get("speaker", 0.0) for c in said] == [1.0, 0.0]


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_a_named_speaker_never_lowers_similarity(dense: float, lexical: float) -> None:
    """With all else equal, the memory the named person said is at least as similar."""
    paths = {"dense": dense, "lexical": lexical}
    policy = Policy()
    assert similarity({**paths, "speaker": 1.0}, policy) >= similarity(paths, policy)


TURN = "My kids and I spent Sunday at the museum. They loved the dinosaur bones."


def _sibling(memory: HindsightMemory) -> MemoryRecord:
    memory.capture(TURN, namespace="u", speaker="Mel", thread_id="t")
    rows = memory.list_memories("u")
    return next(r for r in rows if r.content.startswith("They loved"))


def test_an_event_is_found_by_the_words_of_its_turn(memory: HindsightMemory) -> None:
    """'They loved the dinosaur bones' never says museum; its turn does."""
    sibling = _sibling(memory)
    result = memory.recall("museum", namespace="u", explain=True)
    lexical = (result.explanation or {}).get(sibling.id, {}).get("lexical", 0.0)
    assert lexical > 0 and sibling.id in result.ids


def test_a_line_shows_its_fragment_in_the_words_of_its_turn(
    memory: HindsightMemory,
) -> None:
    """The turn's sentences around the match are shown once; its other fragment
    is returned within that line instead of a line of its own."""
    sibling = _sibling(memory)
    result = memory.recall("museum", namespace="u")
    lines = [m.line for m in result.memories if m.line]
    shown = [m for m in result.memories if m.id == sibling.id]
    assert len(shown) == 1 and shown[0].record.content in result.to_prompt()
    assert sum("museum" in line for line in lines) == 1


def test_without_turn_context_the_sibling_has_no_lexical_match() -> None:
    """The same capture with ``lexical_context=False``: no lexical hit for the word."""
    plain = HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), policy=Policy(lexical_context=False)
    )
    sibling = _sibling(plain)
    result = plain.recall("museum", namespace="u", explain=True)
    assert (result.explanation or {}).get(sibling.id, {}).get("lexical", 0.0) == 0.0


def test_forgetting_an_event_scrubs_it_from_its_siblings(
    memory: HindsightMemory,
) -> None:
    """The forgotten sentence does not live on in the index text of its turn."""
    sibling = _sibling(memory)
    museum = next(r for r in memory.list_memories("u") if "museum" in r.content)
    memory.forget("u", [museum.id])
    (left,) = memory.backend.get("u", [sibling.id])
    result = memory.recall("museum Sunday", namespace="u", explain=True)
    lexical = (result.explanation or {}).get(sibling.id, {}).get("lexical", 0.0)
    assert ("context" in left.meta, "turn" in left.meta, lexical) == (
        False,
        False,
        0.0,
    )
    assert "museum" not in result.to_prompt()


def test_a_reply_is_indexed_with_the_question_it_answers(
    memory: HindsightMemory,
) -> None:
    """Captured on its own, an answer still carries its question's words; a reply
    to a statement does not."""
    for speaker, text in (
        ("Mel", "Have you read Becoming Nicole? What did you take from it?"),
        ("Cat", "It taught me self-acceptance."),
        ("Mel", "I started a pottery class."),
        ("Cat", "That sounds relaxing."),
    ):
        memory.capture(text, namespace="u", speaker=speaker, thread_id="t")
    rows = {r.content: r for r in memory.list_memories("u")}
    answer, reply = rows["It taught me self-acceptance."], rows["That sounds relaxing."]
    result = memory.recall("Becoming Nicole", namespace="u", explain=True)
    lexical = (result.explanation or {}).get(answer.id, {}).get("lexical", 0.0)
    assert ("Nicole" in answer.meta.get("context", ""), lexical > 0) == (True, True)
    assert "context" not in reply.meta


def test_forgetting_a_question_scrubs_it_from_its_answer(
    memory: HindsightMemory,
) -> None:
    """The answer's index text loses the forgotten question's words."""
    memory.capture("Did you visit Lisbon?", namespace="u", speaker="A", thread_id="t")
    memory.capture("Yes, twice last year.", namespace="u", speaker="B", thread_id="t")
    rows = memory.list_memories("u")
    question = next(r for r in rows if "Lisbon" in r.content)
    answer = next(r for r in rows if r.content.startswith("Yes"))
    assert "Lisbon" in answer.meta.get("context", "")
    memory.forget("u", [question.id])
    (left,) = memory.backend.get("u", [answer.id])
    assert "Lisbon" not in left.meta.get("context", "")


def test_a_private_question_never_becomes_a_shared_answers_context(
    memory: HindsightMemory,
) -> None:
    """Context crosses only between captures with the same visibility."""
    memory.capture("Did you visit Lisbon?", namespace="u", thread_id="t", agent_id="a1")
    memory.capture(
        "Yes, twice last year.",
        namespace="u",
        thread_id="t",
        agent_id="a1",
        scope="team",
    )
    answer = next(
        r for r in memory.list_memories("u", agent_id="a1") if r.content[:3] == "Yes"
    )
    assert "Lisbon" not in answer.meta.get("context", "")


class _Counting(HashingEmbedder):
    """Records every text it embeds."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts += texts
        return super().embed(texts)


LONG_REPLY = " ".join(
    f"Step {n}: water the {plant} every {days} days and keep it out of direct sun."
    for n, (plant, days) in enumerate(
        [
            ("fern", 3),
            ("basil", 2),
            ("cactus", 14),
            ("orchid", 7),
            ("ivy", 5),
            ("mint", 2),
            ("aloe", 10),
            ("rosemary", 4),
            ("lavender", 6),
        ],
        start=1,
    )
)


def test_a_long_turn_is_its_sentences_mean_not_one_more_model_pass() -> None:
    """Past context_pass_chars the turn is not embedded again; its events still
    carry it (the mean of their own vectors), so they sit nearer each other."""
    assert len(LONG_REPLY) > Policy().context_pass_chars
    counting = _Counting()
    memory = HindsightMemory(InMemoryBackend(), counting, clock=FrozenClock())
    memory.capture(LONG_REPLY, namespace="u", speaker="assistant")
    assert not [t for t in counting.texts if len(t) > 200]
    blended = memory.list_memories("u")
    plain = HindsightMemory(
        InMemoryBackend(),
        HashingEmbedder(),
        clock=FrozenClock(),
        policy=Policy(context_weight=0.0),
    )
    plain.capture(LONG_REPLY, namespace="u", speaker="assistant")
    alone = plain.list_memories("u")
    assert len(blended) == len(alone) > 5

    def spread(of: HindsightMemory, records: list[MemoryRecord]) -> float:
        """The sum of cosines over every pair of the turn's events."""
        got = of.backend.get("u", [r.id for r in records], vectors=True)
        vs = [r.dense for r in got]
        return sum(
            sum(a * b for a, b in zip(vs[i], vs[j], strict=True))
            for i in range(len(vs))
            for j in range(i)
        )

    assert spread(memory, blended) > spread(plain, alone)


def test_a_short_turn_is_still_embedded_whole_for_its_context() -> None:
    """Under context_pass_chars the turn is one more text of the same call."""
    counting = _Counting()
    memory = HindsightMemory(InMemoryBackend(), counting, clock=FrozenClock())
    memory.capture(TURN, namespace="u", speaker="Mel")
    assert f"Mel: {TURN}" in counting.texts
