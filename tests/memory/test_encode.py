"""Heuristic extraction: kinds, salience, entities and causes, English and Chinese."""

from __future__ import annotations

import pytest

from hindsight_lg.memory.language.encode import classify, entities, extract, salience
from hindsight_lg.model import Kind, SourceKind

REF = 1_686_756_600.0


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("I prefer green tea over coffee", Kind.PREFERENCE),
        ("I don't like Redis for caching", Kind.PREFERENCE),
        ("Remind me to book flights to Lisbon", Kind.TASK),
        ("From now on, always answer in bullet points", Kind.RULE),
        ("What's the weather in Paris?", Kind.QUERY),
        # "book" the noun is no task: a one-off question, a thing read.
        ("What's a good book to read on a long flight?", Kind.QUERY),
        ("I read a great book last week", Kind.EVENT),
        ("I booked a hotel in Rome", Kind.TASK),
        ("My sister Lena lives in Lisbon", Kind.FACT),
        ("I'm feeling stressed about the launch", Kind.EMOTION),
        ("We went to the beach", Kind.EVENT),
        ("我喜欢喝绿茶", Kind.PREFERENCE),
        ("记得提醒我带伞", Kind.TASK),
        ("帮我查一下上海明天的天气", Kind.QUERY),
        ("以后都用中文回答", Kind.RULE),
        # A rule is an instruction to the assistant; a habit told about
        # oneself is a preference, and "always" in passing is neither.
        ("Never call me Bob", Kind.RULE),
        ("Please always reply in English", Kind.RULE),
        ("总是用中文回答", Kind.RULE),
        ("I never eat pork", Kind.PREFERENCE),
        ("We always go camping in July", Kind.PREFERENCE),
        ("我从不吃猪肉", Kind.PREFERENCE),
        # Chinese states lasting facts without 的 or 是, as English does with "I'm".
        ("我男朋友是程序员，在珠江新城上班", Kind.FACT),
        ("我对花生过敏", Kind.FACT),
        ("我老家在潮汕", Kind.FACT),
        ("我们去海边玩了", Kind.EVENT),
        ("It's always nice to see you", Kind.EVENT),
    ],
)
def test_classify(text: str, kind: Kind) -> None:
    """Each kind is recognised in English and Chinese."""
    assert kind == classify(text)


@pytest.mark.parametrize(
    "filler", ["ok thanks!", "Got it.", "lol", "好的", "谢谢！", "嗯"]
)
def test_filler_is_below_the_promotion_threshold(filler: str) -> None:
    """Acknowledgements score under 0.3, so they are never promoted."""
    [event] = extract(filler, speaker="user", ref_time=REF).events
    assert event.salience < 0.3


@pytest.mark.parametrize(
    "managing",
    [
        "Would you like to continue?",
        "Please take all the time you need.",
        "Feel free to reach out anytime.",
        "Let me know if you have any other questions!",
        "Thanks for listening.",
    ],
)
def test_words_that_only_run_the_conversation_are_not_promoted(managing: str) -> None:
    """Offers and invitations that open and close a long reply score under 0.3."""
    [event] = extract(managing, speaker="assistant", ref_time=REF).events
    assert event.salience < 0.3


@pytest.mark.parametrize(
    "said",
    [
        "I need help with my thesis.",
        "Let's start with the food in Rostock.",
        "I like tea.",
    ],
)
def test_a_managing_word_beside_content_keeps_the_statement(said: str) -> None:
    """A statement that names its subject is kept whatever else it says."""
    [event] = extract(said, speaker="user", ref_time=REF).events
    assert event.salience >= 0.3


def test_salience_rises_with_entities_and_time() -> None:
    """Named entities and a time expression make an event more worth keeping."""
    plain = salience("we went out", Kind.EVENT, [], False)
    rich = salience("we went out", Kind.EVENT, ["Lena", "Lisbon"], True)
    assert plain < rich <= 1.0


def test_salience_orders_kinds() -> None:
    """Rules outrank preferences, which outrank one-off queries."""
    text = "a reasonably long sentence here"
    got = [
        salience(text, k, [], False) for k in (Kind.RULE, Kind.PREFERENCE, Kind.QUERY)
    ]
    assert got == sorted(got, reverse=True)


def test_entities_in_english_skip_sentence_words() -> None:
    """Capitalised names are entities; pronouns and weekdays are not."""
    assert ["Lena", "Lisbon"] == entities(
        "My sister Lena lives in Lisbon. I visit Monday"
    )
    # A common word opening the sentence is capitalised, not a name; a name is.
    assert ([], ["Lena", "Harz"]) == (
        entities("From now on, always answer me in short bullet points."),
        entities("Lena goes hiking in the Harz."),
    )


def test_entities_in_chinese_find_places() -> None:
    """Places after 去/在 and subjects before 天气 are entities."""
    assert "上海" in entities("我下周三要去上海出差")


def test_extract_chinese_example_links_task_to_query() -> None:
    """The design's example: a query and a task, the task causing the query."""
    x = extract(
        "帮我查一下上海明天的天气，另外我下周三要去上海出差，记得提醒我带伞",
        speaker="user",
        ref_time=REF,
    )
    assert [Kind.QUERY, Kind.TASK] == [e.kind for e in x.events]
    assert [(1, 0)] == x.causes
    assert all(e.mentioned_time is not None for e in x.events)
    assert ["user"] == x.events[0].participants


def test_extract_flags_updates_speculation_and_hearsay() -> None:
    """Update words, hedges and reported speech are recorded on the draft."""
    update, maybe, hearsay = (
        extract(t, speaker=None, ref_time=REF).events[0]
        for t in (
            "Actually Redis is fine for caching now",
            "Maybe I will move to Oslo",
            "Tom told me that the office closes",
        )
    )
    assert update.is_update
    assert SourceKind.USER_SPECULATION == maybe.source_kind
    assert SourceKind.THIRD_PARTY == hearsay.source_kind


def test_explicit_because_links_consecutive_events() -> None:
    """A "so"/"because" sentence is caused by the one before it."""
    x = extract(
        "The server crashed. So I need to restart it tonight.",
        speaker=None,
        ref_time=REF,
    )
    assert [(0, 1)] == x.causes


@pytest.mark.parametrize("text", ["I'm into Python", "I use Vim", "I quit Twitter"])
def test_a_statement_of_stopwords_and_a_name_is_kept_when_it_says_something(
    text: str,
) -> None:
    """ "I'm into Python" states what the user likes; it is no acknowledgement."""
    [event] = extract(text, speaker="user", ref_time=REF).events
    assert event.salience >= 0.3


def test_thanks_and_a_name_is_still_an_acknowledgement() -> None:
    """ "Thanks, Melanie!" sets no slot and stays below the promotion threshold."""
    [event] = extract("Thanks, Melanie!", speaker="user", ref_time=REF).events
    assert event.salience < 0.3
