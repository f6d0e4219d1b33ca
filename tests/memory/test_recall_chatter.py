"""Turn windows pass over chatter: the allowance goes to sentences that say something."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.memory.recall.lines import chatter, turn_window
from hindsight_lg.model import MemoryRecord


@pytest.mark.parametrize(
    "sentence",
    [
        "Thanks so much, Mel!",
        "Wow, that's awesome!",
        "Hey Caroline, long time no see!",
        "Haha yeah totally.",
        "Congrats!!",
        "I totally agree.",
        "谢谢你！",
        "哈哈，太棒了！",
        "好的",
    ],
)
def test_social_talk_is_chatter(sentence: str) -> None:
    assert chatter(sentence)


@pytest.mark.parametrize(
    "sentence",
    [
        "We made bowls.",
        "My sister Mei moved to Chengdu.",
        "The interview is on Friday at 3pm.",
        "Thanks for the Dune recommendation!",
        "I'm allergic to peanuts.",
        "我妹妹搬到成都了。",
        "谢谢你送的茶叶！",
    ],
)
def test_a_sentence_that_says_something_is_not(sentence: str) -> None:
    assert not chatter(sentence)


def _record(fragment: str, turn: str) -> MemoryRecord:
    record = MemoryRecord(namespace="u", content=fragment)
    record.meta["turn"] = turn
    return record


def test_the_window_passes_over_chatter_to_the_next_thing_said() -> None:
    """ "Wow, so cool!" between the fragment and the detail is left out and
    marked; the detail it stood in front of is shown."""
    turn = "I went to a pottery class. Wow, so cool! We made bowls. See you!"
    window = turn_window(_record("I went to a pottery class.", turn), 45)
    assert window == "I went to a pottery class. … We made bowls. …"


def test_a_window_without_chatter_is_the_run_of_sentences_it_was() -> None:
    turn = "Guess what? I went to a pottery class. We made bowls. They are blue."
    window = turn_window(_record("I went to a pottery class.", turn), 45)
    assert window == "… I went to a pottery class. We made bowls. …"


def test_the_fragment_is_shown_even_when_it_is_chatter() -> None:
    """What matched is always shown: passing over is for its neighbours."""
    turn = "Thanks, Mel! I adopted a puppy named Luna last week, she is tiny."
    window = turn_window(_record("Thanks, Mel!", turn), 40)
    assert window is not None and window.startswith("Thanks, Mel!")


_SENTENCES = st.sampled_from(
    [
        "Thanks so much!",
        "Wow!",
        "We made bowls.",
        "I went to a pottery class.",
        "My sister lives in Lisbon.",
        "Haha yeah.",
        "The kids loved it.",
        "谢谢！",
        "我们做了碗。",
    ]
)


@given(
    st.lists(_SENTENCES, min_size=2, max_size=8),
    st.integers(0, 7),
    st.integers(20, 120),
)
def test_a_window_holds_its_fragment_within_its_allowance(
    sentences: list[str], pick: int, max_chars: int
) -> None:
    """Whatever the turn: the fragment is in the window, the sentences keep
    their order, and their characters (gap marks aside) fit the allowance."""
    turn = " ".join(sentences)
    fragment = sentences[pick % len(sentences)]
    window = turn_window(_record(fragment, turn), max_chars)
    if window is None:
        assert len(fragment) > max_chars or fragment not in turn
        return
    assert fragment in window
    if len(turn) > max_chars:
        body = window.removeprefix("… ").removesuffix(" …")
        assert len(body.replace(" … ", "")) <= max_chars
    shown = [p for p in window.replace("…", "\0").split("\0") if p.strip()]
    at = 0
    for part in shown:
        found = turn.find(part.strip(), at)
        assert found >= 0
        at = found
