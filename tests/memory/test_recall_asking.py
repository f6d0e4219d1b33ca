"""The shape of a question: several memories gathered, or a guess, each given its lines."""

from __future__ import annotations

from dataclasses import replace

import pytest

from hindsight_lg import HindsightMemory, Policy
from hindsight_lg.embeddings import FlagEmbeddingEmbedder
from hindsight_lg.memory.language.asking import asks_for_many, asks_to_infer
from hindsight_lg.memory.recall.assembly import assemble, near_share
from hindsight_lg.memory.recall.result import Candidate, build_probe
from hindsight_lg.model import MemoryRecord

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


@pytest.mark.parametrize(
    ("question", "guess"),
    [
        ("Would Caroline likely enjoy a trip to Japan?", True),
        ("What might John's degree be in?", True),
        ("Is it likely that Nate has friends besides Joanna?", True),
        ("What should I get Ann for her birthday?", True),
        ("她可能喜欢什么礼物？", True),
        ("他会不会搬回老家？", True),
        ("What did Ann do in May 2023?", False),
        ("Where does Ann work?", False),
        ("我妹妹在哪里工作？", False),
    ],
)
def test_questions_that_ask_for_a_guess(question: str, guess: bool) -> None:
    """Would, might, likely and their Chinese forms; "May" the month is none."""
    assert asks_to_infer(question) is guess
    assert build_probe(question, now=START).guess is guess


def test_each_shape_has_its_share_of_windows() -> None:
    """A guess over several memories still wants the words around each."""
    policy = Policy(near_share=0.3, near_share_many=0.0, near_share_guess=0.6)
    assert near_share(policy, many=False, guess=False) == 0.3
    assert near_share(policy, many=True, guess=False) == 0.0
    assert near_share(policy, many=False, guess=True) == 0.6
    assert near_share(policy, many=True, guess=True) == 0.6


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
    """Its compact lines show their fragments alone, so more turns fit; a
    question about one fact shows the words around its best fragments."""
    ranked = [Candidate(_turn(i), score=1.0 - i / 100) for i in range(30)]
    policy = Policy(full_text_share=0.0)
    one, _, _ = assemble(ranked, 300, None, policy)
    many, _, _ = assemble(ranked, 300, None, policy, many=True)
    assert "sad ending" in one[0].line
    assert not any("sad ending" in m.line for m in many)
    assert len(many) > len(one)
    guess, _, _ = assemble(ranked, 300, None, policy, guess=True)
    windowed = [m for m in guess if "sad ending" in m.line]
    assert len(windowed) > sum("sad ending" in m.line for m in one)
    same = Policy(full_text_share=0.0, near_share_many=policy.near_share)
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
    wide = Policy(full_text_share=0.0, near_share=0.6)
    gathering = HindsightMemory(memory.backend, minilm, policy=wide, clock=memory.clock)
    gathered = gathering.recall(question, **asked).to_prompt()
    policy = replace(wide, near_share_many=wide.near_share)
    single = HindsightMemory(memory.backend, minilm, policy=policy, clock=memory.clock)
    one = single.recall(question, **asked).to_prompt()
    assert gathered.count("grey all week") < one.count("grey all week")
    named = sum(b in gathered for b in books)
    assert named > sum(b in one for b in books)
    assert named >= 5


def test_explain_says_how_the_question_was_read(
    minilm_memory: HindsightMemory, namespace: str
) -> None:
    """`explain`'s first line names a gathering or guessing question; a
    question about one fact reads as before."""
    from hindsight_lg._commands.lifecycle import explain_tree

    minilm_memory.capture("I read Dune in May", namespace=namespace, speaker="Ann")
    asked = {"namespace": namespace, "explain": True, "timeout": None}
    many = minilm_memory.recall("What books has Ann read?", **asked)
    guess = minilm_memory.recall("Would Ann like Emma?", **asked)
    fact = minilm_memory.recall("When did Ann read Dune?", **asked)
    assert (many.asked, guess.asked, fact.asked) == ("gather", "guess", "fact")
    assert explain_tree(many).startswith(
        "recall 'What books has Ann read?' (asked: gather):"
    )
    assert explain_tree(guess).startswith(
        "recall 'Would Ann like Emma?' (asked: guess):"
    )
    assert explain_tree(fact).startswith("recall 'When did Ann read Dune?': ")
