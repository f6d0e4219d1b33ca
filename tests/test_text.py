"""Text helpers: lexical terms, event splitting, cleaning (English and Chinese)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg._text import (
    approx_tokens,
    clean,
    has_cjk,
    has_negation,
    split_events,
    summarize,
    terms,
)


def test_terms_lowercase_stem_and_drop_stopwords() -> None:
    """English terms are lowercased, lightly stemmed, without stopwords."""
    assert ["redi", "fine", "cach"] == terms("Redis is fine for caching")


def test_caching_and_cache_share_no_surprise_stem() -> None:
    """Plural and -ing forms meet the singular: trips/trip, hiking/hik."""
    assert terms("trips") == terms("trip")


def test_terms_of_chinese_are_bigrams_and_characters() -> None:
    """Chinese runs give overlapping bigrams plus single characters."""
    assert ["上海", "海出", "出差", "上", "海", "出", "差"] == terms("上海出差")


def test_chinese_word_finds_the_compound_holding_it() -> None:
    """A question's word meets a longer word that contains it (工程 in 工程师)."""
    # A word segmenter (jieba) keeps "工程师" whole and shares no term with
    # "工程": bigrams index the parts. jieba terms measured worse on the
    # bilingual dev set and the relevance set, so terms() keeps bigrams.
    question, memory = "我是做什么工程的？", "我在一家芯片公司做测试工程师"
    assert {"工程"} == {t for t in terms(question) if len(t) > 1} & set(terms(memory))


def test_terms_of_mixed_script_separate_the_scripts() -> None:
    """Latin words next to Chinese characters are their own terms."""
    got = terms("和Alice去Berlin")
    assert {"alice", "berlin", "和", "去"} <= set(got)


def test_keep_stopwords() -> None:
    """Stopwords stay when asked for."""
    assert ["the", "cat"] == terms("the cat", keep_stopwords=True)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "I moved to Berlin. I love it! Do you?",
            ["I moved to Berlin.", "I love it!", "Do you?"],
        ),
        (
            "I like tea, also I have a dog",
            ["I like tea", "I have a dog"],
        ),
        (
            "帮我查一下上海明天的天气，另外我下周三要去上海出差",
            ["帮我查一下上海明天的天气", "我下周三要去上海出差"],
        ),
        ("我到了。谢谢！", ["我到了。", "谢谢！"]),
        (
            "I also enjoy a good espresso now and then.",
            ["I also enjoy a good espresso now and then."],
        ),
        ("我还有一只猫", ["我还有一只猫"]),
        (
            "It costs 3.5 euros at www.shop.de now.",
            ["It costs 3.5 euros at www.shop.de now."],
        ),
        (
            "Dr. Feldman retired. Jordan took over.",
            ["Dr. Feldman retired.", "Jordan took over."],
        ),
        ('She said "no." Then left.', ['She said "no."', "Then left."]),
        (
            "Next steps:\n1. Install R.\n2. Open RStudio (Sat 8:00 - 13:00).",
            ["Next steps:", "1. Install R.", "2. Open RStudio (Sat 8:00 - 13:00)."],
        ),
        ("Intro line\n\nSecond paragraph", ["Intro line", "Second paragraph"]),
        ("a line wrapped\nmid sentence.", ["a line wrapped\nmid sentence."]),
        ("...", []),
    ],
)
def test_split_events(text: str, expected: list[str]) -> None:
    """Turns split at sentence ends and discourse markers, in both languages."""
    assert expected == split_events(text)


def test_clean_strips_control_characters() -> None:
    """Control characters become spaces and the ends are trimmed."""
    assert ("a b", False) == clean("  a\x07b \x1b ", max_chars=100)


def test_clean_truncates_with_a_marker() -> None:
    """Past the limit the text is cut and marked, and the flag says so."""
    text, truncated = clean("word " * 100, max_chars=20)
    assert (True, "word word word word …") == (truncated, text)


def test_clean_refuses_nul() -> None:
    """NUL bytes mean binary data, which is a ValueError."""
    with pytest.raises(ValueError, match="NUL"):
        clean("abc\x00def", max_chars=100)


@given(st.text(alphabet=st.characters(blacklist_characters="\x00"), max_size=300))
def test_clean_never_exceeds_the_limit(text: str) -> None:
    """Whatever the input, cleaned text fits the limit plus its marker."""
    out, truncated = clean(text, max_chars=50)
    assert len(out) <= 52
    assert not truncated or out.endswith("…")


def test_negation_in_both_languages() -> None:
    """English and Chinese negations are found; plain statements are not negated."""
    assert [True, True, False, False] == [
        has_negation(t)
        for t in ("I don't like Redis", "我不喜欢咖啡", "Redis is fine", "我喜欢咖啡")
    ]


def test_has_cjk_and_tokens() -> None:
    """Chinese detection and the ceil(chars/4) token estimate."""
    assert (True, False) == (has_cjk("hi 你好"), has_cjk("hello"))
    assert (0, 1, 2) == (
        approx_tokens(""),
        approx_tokens("abcd"),
        approx_tokens("abcde"),
    )


def test_summarize_cuts_at_a_word_boundary() -> None:
    """Long text is cut at a word with an ellipsis; short text is unchanged."""
    assert "short text" == summarize("short   text")
    assert "alpha beta…" == summarize("alpha beta gamma", max_chars=12)


def test_cached_terms_are_a_fresh_list_each_call() -> None:
    """terms() caches short texts; a caller changing its list changes no later result."""
    first = terms("We made pottery bowls in Lisbon")
    first.append("poison")
    first[0] = "poison"
    again = terms("We made pottery bowls in Lisbon")
    assert "poison" not in again
    assert again == terms("We made pottery bowls in Lisbon", keep_stopwords=False)
    assert terms("We made", keep_stopwords=True) != terms("We made")
    long = "pottery " * 400  # past the cached length: computed, same terms
    assert terms(long) == ["pottery"] * 400
