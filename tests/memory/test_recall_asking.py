"""Questions answered by several memories: read as such, and given their own lines."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg.embeddings import FlagEmbeddingEmbedder
from hindsight_lg.memory.language.asking import asks_for_many, with_its_mark
from hindsight_lg.memory.recall.assembly import assemble, near_lines
from hindsight_lg.memory.recall.result import Candidate, build_probe
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

DAY = 86400.0
START = 1_700_000_000.0


@pytest.mark.parametrize(
    "question",
    [
        "What books has Melanie read?",
        "What activities does Melanie partake in?",
        "Which cities has Jon visited?",
        "What LGBTQ+ events has Caroline participated in?",
        "What musical artists/bands has Melanie seen?",
        "What kind of interests do Joanna and Nate share?",
        "What are Joanna's hobbies?",
        "What has Melanie painted?",
        "Where has Melanie camped?",
        "How many times did we go hiking this year?",
        "What do Jon and Gina have in common?",
        "他去过哪些城市？",
        "我这个月跑了几次步？",
        "我吃过什么日本菜？",
    ],
)
def test_questions_that_gather_several_memories(question: str) -> None:
    """Plurals after what/which, the perfect, counting and their Chinese forms."""
    assert asks_for_many(question)
    assert build_probe(question, now=START).many


@pytest.mark.parametrize(
    "question",
    [
        "Where does Ann's sister work?",
        "What career path has Caroline decided to pursue?",
        "What did Caroline research?",
        "What is Caroline's identity?",
        "When is my dentist appointment?",
        "Which class does Ann teach?",
        "我妹妹在哪里工作？",
        "不过我明天几点开会？",
        "",
    ],
)
def test_questions_about_one_fact(question: str) -> None:
    """A singular asked, or no gathering cue: one memory answers (过 of 不过 is none)."""
    assert not asks_for_many(question)


def test_each_shape_has_its_near_lines() -> None:
    """A gathering question has its own share and window; others the usual."""
    policy = Policy(
        near_share=0.3,
        turn_chars_near=250,
        near_share_many=0.5,
        turn_chars_near_many=120,
    )
    assert near_lines(policy, many=False) == (0.3, 250)
    assert near_lines(policy, many=True) == (0.5, 120)


def _turn(i: int) -> MemoryRecord:
    fragment = f"I read book number {i}."
    record = MemoryRecord(
        namespace="u",
        content=fragment,
        summary=fragment,
        event_time=START + i * DAY,
        source_ids=[f"D{i}:1"],
    )
    record.meta["turn"] = f"{fragment} It was a long one with a sad ending, sadly."
    return record


def test_a_gathering_question_reaches_more_turns_in_the_same_budget() -> None:
    """With shorter windows of its own, a gathering question's lines reach
    more turns; a question about one fact shows the words around its best
    fragments; at the usual share and window both read alike."""
    ranked = [Candidate(_turn(i), score=1.0 - i / 100) for i in range(30)]
    policy = Policy(full_text_share=0.0, near_share_many=0.3, turn_chars_near_many=0)
    one, _, _ = assemble(ranked, 300, None, policy)
    many, _, _ = assemble(ranked, 300, None, policy, many=True)
    assert "sad ending" in one[0].line
    assert not any("sad ending" in m.line for m in many)
    assert len(many) > len(one)
    same = replace(policy, turn_chars_near_many=policy.turn_chars_near)
    alike, _, _ = assemble(ranked, 300, None, same, many=True)
    assert [m.line for m in alike] == [m.line for m in one]


def test_recall_shows_more_of_the_turns_a_list_question_gathers(
    minilm_memory: HindsightMemory, minilm: FlagEmbeddingEmbedder, namespace: str
) -> None:
    """End to end, Milvus Lite and real embeddings: "what books has Ann read?"
    over a year of talk reaches more of the turns that name a book than the
    same policy reading it as a question about one fact."""
    memory = minilm_memory
    books = ["Dune", "Emma", "Beloved", "Ulysses", "Rebecca", "Middlemarch"]
    filler = (
        "The weather was grey all week and the trains ran late again, which "
        "made the mornings long."
    )
    year_ago = memory.clock() - 365 * DAY
    for i, book in enumerate(books):
        memory.capture(
            f"I finally finished reading {book} last night. {filler}",
            namespace=namespace,
            speaker="Ann",
            event_time=year_ago + i * 40 * DAY,
        )
    question = "What books has Ann read?"
    asked = {"namespace": namespace, "budget_tokens": 160, "timeout": None}
    # Windows on most lines, so that the one-fact reading shows the filler.
    wide = Policy(full_text_share=0.0, near_share=0.6, near_share_many=0.6)
    short = replace(wide, turn_chars_near_many=60)
    gathering = HindsightMemory(
        memory.backend, minilm, policy=short, clock=memory.clock
    )
    gathered = gathering.recall(question, **asked).to_prompt()
    single = HindsightMemory(memory.backend, minilm, policy=wide, clock=memory.clock)
    one = single.recall(question, **asked).to_prompt()
    assert gathered.count("grey all week") < one.count("grey all week")
    named = sum(b in gathered for b in books)
    assert named > sum(b in one for b in books)
    assert named >= 5


def test_explain_says_how_the_question_was_read(
    minilm_memory: HindsightMemory, namespace: str
) -> None:
    """`explain`'s first line names a gathering question; a question about
    one fact reads as before."""
    from hindsight_lg._commands.lifecycle import explain_tree

    minilm_memory.capture("I read Dune in May", namespace=namespace, speaker="Ann")
    asked = {"namespace": namespace, "explain": True, "timeout": None}
    many = minilm_memory.recall("What books has Ann read?", **asked)
    fact = minilm_memory.recall("When did Ann read Dune?", **asked)
    assert (many.asked, fact.asked) == ("gather", "fact")
    assert explain_tree(many).startswith(
        "recall 'What books has Ann read?' (asked: gather):"
    )
    assert explain_tree(fact).startswith("recall 'When did Ann read Dune?': ")


@pytest.mark.parametrize(
    ("typed", "embedded"),
    [
        ("where does Maya live", "where does Maya live?"),
        ("is the user vegetarian", "is the user vegetarian?"),
        ("How many times did we hike  ", "How many times did we hike?"),
        ("Where does Maya live?", "Where does Maya live?"),
        ("Does she like tea.", "Does she like tea."),
        ("list the user's food restrictions", "list the user's food restrictions"),
        ("user food preferences", "user food preferences"),
        ("我住在哪里", "我住在哪里"),
    ],
)
def test_a_question_typed_without_its_mark_is_embedded_with_it(
    typed: str, embedded: str
) -> None:
    """An English question without "?" gets one; anything else is unchanged."""
    assert embedded == with_its_mark(typed)


def test_the_dense_path_embeds_a_bare_question_with_its_mark() -> None:
    """What the dense path embeds for "where does Maya live" is the question
    as it reads with its mark (less the person it names), as for "...?"."""
    with HindsightMemory(InMemoryBackend(), HashingEmbedder()) as memory:
        searcher = memory._parts().searcher
        bare = searcher._dense_text(build_probe("where does Maya live", now=START))
        marked = searcher._dense_text(build_probe("where does Maya live?", now=START))
    assert ("where does live?", "where does live?") == (bare, marked)
