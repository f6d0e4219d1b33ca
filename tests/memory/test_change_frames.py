"""Changes of mind that name what they give up: "from X to Y", "instead of", "gave up", 戒了."""

from __future__ import annotations

import pytest

from hindsight_lg.memory.language.frames import split_change
from hindsight_lg.memory.language.judge import Decision, judge_texts
from hindsight_lg.memory.language.slots import read


@pytest.mark.parametrize(
    ("text", "rest", "previous"),
    [
        (
            "I've switched from green tea to black coffee",
            "I've switched to black coffee",
            "green tea",
        ),
        ("We moved from Lisbon to Porto", "We moved to Porto", "Lisbon"),
        ("I walk to work instead of driving", "I walk to work", "driving"),
        ("I swapped Firefox for Safari", "I switched to Safari", "Firefox"),
        ("我从武汉搬到了长沙", "我搬到了长沙", "武汉"),
        ("我把Vim换成了VS Code", "我换成了VS Code", "Vim"),
        ("我骑车上班而不是坐地铁", "我骑车上班", "坐地铁"),
        # No frame: "从小" is "since childhood", not an old value.
        ("我从小就喜欢猫", "我从小就喜欢猫", ""),
        ("I come from Spain", "I come from Spain", ""),
    ],
)
def test_the_old_value_is_taken_out_and_the_rest_kept(
    text: str, rest: str, previous: str
) -> None:
    """The frame's old value comes out; what is left says the new value."""
    change = split_change(text)
    assert (rest, previous) == (change.text, change.previous)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # switched / moved / changed / went from X to Y
        (
            "I drink green tea every morning",
            "I've switched from green tea to black coffee in the mornings",
        ),
        ("I take the bus to work", "I changed from the bus to the subway"),
        ("I live in Lisbon", "We moved from Lisbon to Porto in the spring"),
        ("I'm into Python", "I switched from Python to Rust for side projects"),
        # Y instead of X
        ("I drive to work", "I walk to work instead of driving now"),
        ("I drink black tea in the afternoon", "I have coffee instead of black tea"),
        # replaced X with Y
        ("I drink milk in my coffee", "I replaced milk with oat milk"),
        # no longer / stopped / gave up / quit
        ("I drink green tea every morning", "I no longer drink green tea"),
        ("I take the train", "I stopped taking the train"),
        ("I eat a lot of chocolate", "I gave up chocolate"),
        ("I drink soda with lunch", "I quit soda"),
        ("I eat meat", "I cut out meat last year"),
        ("I drink coffee", "No more coffee for me"),
        ("I smoke a pack a day", "I quit smoking"),
        ("I code in Java", "I've moved on from Java to Kotlin"),
        ("I drive to work", "I traded my car for a bike"),
        # Chinese: 从…换成…, 改成, 把…换成, 不再, 戒了, 换到
        ("我每天喝绿茶", "我从绿茶换成了黑咖啡"),
        ("我住在武汉", "我从武汉搬到了长沙"),
        ("我坐地铁上班", "我改成骑车上班了"),
        ("我用Vim写代码", "我把Vim换成了VS Code"),
        ("我喜欢打篮球", "我不再打篮球了"),
        ("我每天吃甜食", "我戒了甜食"),
        ("我每天晚上喝啤酒", "我戒掉啤酒了"),
        ("我用Chrome", "我换到Firefox了"),
        ("我早上喝牛奶", "我早上改喝豆浆了"),
        ("我每天抽烟", "我戒烟了"),
        ("我喝咖啡", "我改成喝茶了"),
    ],
)
def test_a_change_that_names_the_old_value_replaces_it(old: str, new: str) -> None:
    """Each phrasing of a change of mind supersedes the statement it gives up."""
    assert Decision.REPLACE == judge_texts(new, old)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # It gave up something else: the other drink stays.
        (
            "I drink water with lunch",
            "I switched from green tea to black coffee",
            Decision.ADD,
        ),
        ("我晚上喝水", "我从绿茶换成了黑咖啡", Decision.ADD),
        # Unrelated, someone else's, supposed, or denied denials.
        ("I play chess online", "I gave up chocolate", Decision.IGNORE),
        ("I live in Lisbon", "My brother moved from Lisbon to Madrid", Decision.IGNORE),
        ("我住在武汉", "我妹妹从武汉搬到了长沙", Decision.IGNORE),
        ("I drink tea", "My sister gave up tea", Decision.IGNORE),
        (
            "I drink green tea every morning",
            "I might switch from green tea to coffee",
            Decision.IGNORE,
        ),
        ("我每天喝绿茶", "我可能会从绿茶换成咖啡", Decision.IGNORE),
        ("I drink water", "I might give up water", Decision.IGNORE),
        ("I drink green tea", "I never gave up green tea", Decision.REINFORCE),
        ("我每天喝绿茶", "我没有戒绿茶", Decision.REINFORCE),
        ("I smoke", "I never quit smoking", Decision.REINFORCE),
        ("I drink coffee", "I never stopped drinking coffee", Decision.REINFORCE),
        ("I eat smoked salmon on Sundays", "I quit smoking", Decision.IGNORE),
        # Giving up coffee is not giving up coffee shops, in either language.
        ("I like coffee shops", "I gave up coffee", Decision.IGNORE),
        ("I like coffee shops", "I switched from coffee to tea", Decision.IGNORE),
        ("我喜欢咖啡店", "我戒了咖啡", Decision.IGNORE),
        # A restatement inside a change frame is still a restatement.
        (
            "I drink black coffee",
            "I switched from tea to black coffee years ago and still drink it",
            Decision.REINFORCE,
        ),
    ],
)
def test_frames_never_supersede_what_they_do_not_name(
    old: str, new: str, expected: Decision
) -> None:
    """Other values, other people, suppositions and double negatives keep the old one."""
    assert expected == judge_texts(new, old)


def test_a_stopped_habit_without_a_category_is_read_as_any_attribute() -> None:
    """ "I gave up chocolate" says nothing of eating or liking, so it matches by value."""
    reading = read("I gave up chocolate")
    assert reading is not None
    assert ("any", True, True) == (
        reading.attribute,
        reading.negated,
        reading.change,
    )
    assert Decision.REPLACE == judge_texts("I gave up chocolate", "I love chocolate")
