"""Slot reading and the replace / correct / add / reinforce / ignore decision."""

from __future__ import annotations

import pytest

from hindsight_lg.memory.language.judge import Decision, judge_texts
from hindsight_lg.memory.language.slots import read


@pytest.mark.parametrize(
    ("text", "slot", "value"),
    [
        ("I take the 7:40 train", "user/commute", "train"),
        (
            "These days I cycle to the office instead of taking the train",
            "user/commute",
            "bike",
        ),
        ("我每天坐地铁上班", "user/commute", "subway"),
        ("我住在杭州", "user/residence", "杭州"),
        ("我上个月搬到深圳了", "user/residence", "深圳"),
        ("My sister Mei lives in Chengdu", "sister:mei/residence", "chengdu"),
        ("I drink green tea every morning", "user/drink", "green tea"),
        ("I also enjoy a good espresso now and then", "user/drink", "espresso"),
        ("I switched to Neovim last month", "user/uses:editor", "neovim"),
        ("我跳槽到腾讯了", "user/employer", "腾讯"),
        ("我叫王磊", "user/name", "王磊"),
        ("我妹妹叫小美", "sister/name", "小美"),
    ],
)
def test_statements_read_as_subject_attribute_value(
    text: str, slot: str, value: str
) -> None:
    """Each statement sets one slot to a normalised value, in either language."""
    reading = read(text)
    assert reading is not None
    assert (slot, value) == (reading.slot, reading.value)


@pytest.mark.parametrize(
    "text", ["我养了只柯基叫馒头，两岁。", "上周五科里来了个新实习生叫小刘，归我带。"]
)
def test_a_name_given_to_someone_else_is_not_the_users(text: str) -> None:
    """叫 names the word before it: a dog's or an intern's name never renames the user."""
    reading = read(text)
    assert reading is None or reading.attribute != "name"


def test_a_statement_outside_every_slot_has_no_reading() -> None:
    """Chit-chat sets no slot, so it can never supersede a memory."""
    assert read("The weather was lovely today") is None


@pytest.mark.parametrize(
    ("old", "new", "decision"),
    [
        (
            "I take the 7:40 train",
            "These days I cycle to the office instead of taking the train",
            Decision.REPLACE,
        ),
        ("我住在杭州", "我上个月搬到深圳了", Decision.REPLACE),
        (
            "I don't like Redis for caching",
            "Actually Redis is fine for caching now",
            Decision.REPLACE,
        ),
        ("I take the train", "I don't take the train anymore", Decision.REPLACE),
        (
            "I live in Hangzhou",
            "Sorry, I meant Ningbo, I live in Ningbo, not Hangzhou",
            Decision.CORRECT,
        ),
        ("我住在杭州", "说错了，我住在宁波", Decision.CORRECT),
        (
            "I drink green tea every morning",
            "I also enjoy a good espresso now and then",
            Decision.ADD,
        ),
        ("我会说英语", "我还会说日语", Decision.ADD),
        ("I live in Hangzhou", "I don't live in Paris", Decision.IGNORE),
        (
            "I live in Berlin",
            "If I moved to Paris I'd have to learn French",
            Decision.IGNORE,
        ),
        ("I use VS Code", "I might switch to Vim at some point", Decision.IGNORE),
        ("我在阿里巴巴工作", "我可能会跳槽到腾讯", Decision.IGNORE),
        ("I live in Hangzhou", "My sister lives in Shenzhen", Decision.IGNORE),
        ("My friend lives in Dallas", "My friend lives in Austin", Decision.ADD),
        ("I work at Google", "I'm still working at Google", Decision.REINFORCE),
        ("我骑车上班", "我每天骑自行车上班", Decision.REINFORCE),
    ],
)
def test_the_decision_follows_the_slots_and_cues(
    old: str, new: str, decision: Decision
) -> None:
    """Changes replace, corrections correct, additions add; suppositions and others' facts are ignored."""
    assert decision == judge_texts(new, old)


def test_only_replace_and_correct_supersede() -> None:
    """Add, reinforce and ignore keep the earlier memory current."""
    assert [d for d in Decision if d.supersedes] == [Decision.REPLACE, Decision.CORRECT]
