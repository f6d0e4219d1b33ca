"""What a change of mind says it gave up: "from X to Y", "Y instead of X", 从X换成Y.

A statement of change often names the old value as well as the new one:
"I've switched from green tea to black coffee", "I walk to work instead of
driving", "I replaced milk with oat milk", "我从武汉搬到了长沙", "我把Vim换成了
VS Code", "我骑车上班而不是坐地铁". :func:`split_change` takes the old value out
(the judge matches it against earlier memories, :mod:`.judge`) and leaves the
rest, which says the new value in words the slot tables already read:
"I've switched to black coffee", "我搬到了长沙".

Each frame is a pattern a reader can check, in the style of :mod:`.slots`;
a statement with none of them comes back unchanged, with no old value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERB_EN = (
    r"switch\w*|chang\w*|mov\w*|went|go|goes|going|gone|convert\w*|transition\w*|"
    r"shift\w*|upgrad\w*|downgrad\w*|relocat\w*|jump\w*|migrat\w*"
)
# At most 80 characters: an old value is a phrase, and an unbounded one would
# scan to the clause end from every "from" of a long run (quadratic).
_OLD_EN = r"(?P<p>[^,.;!?]{1,80}?)"
_OLD_ZH = r"(?P<p>(?:[\u4e00-\u9fffA-Za-z0-9]|(?<=[A-Za-z0-9]) (?=[A-Za-z0-9])){1,12}?)"
_TO_ZH = (
    r"换成|改成|换到|改为|换为|变成|转到|转成|转为|换回|搬到|搬去|搬回|跳槽到|"
    r"跳槽去|改用|改喝|改吃|改坐|改骑|改学|改去|换用|替换成|替换为|改|换"
)
_END_EN = r"(?=\s*(?:$|[,.;!?]))"

# (kind, pattern): "cut" takes the matched ``f`` group out of the text;
# "rewrite" puts "switched to" in its place ("I replaced milk with oat milk"
# reads as "I switched to oat milk").
_FRAMES: list[tuple[str, re.Pattern[str]]] = [
    (
        "cut",
        re.compile(
            rf"\b(?:{_VERB_EN})\s+(?:over\s+|back\s+|on\s+|all\s+)?"
            rf"(?P<f>from\s+{_OLD_EN}\s+)(?=(?:over\s+|back\s+)?(?:to|into)\b)",
            re.I,
        ),
    ),
    (
        "cut",
        re.compile(
            # Starts at a comma or where no space stands before it, and
            # the old value ends on a letter: a run of spaces is then read
            # once, not once per space (quadratic in the run's length).
            r"(?P<f>(?:,|(?<![\s,]))\s*+\b(?:instead of|rather than|in place of)\s+"
            rf"(?P<p>[^,.;!?]*?[^\s,.;!?])){_END_EN}",
            re.I,
        ),
    ),
    (
        "rewrite",
        re.compile(
            r"\b(?P<f>(?:replaced|replace|replacing|swapped|swap|swapping|traded|"
            r"trade|trading|exchanged)\s+(?:my\s+|the\s+|our\s+)?"
            rf"{_OLD_EN}\s+(?:with|for)\s+)",
            re.I,
        ),
    ),
    ("cut", re.compile(rf"(?P<f>从{_OLD_ZH})(?={_TO_ZH})")),
    ("cut", re.compile(rf"(?P<f>把{_OLD_ZH})(?={_TO_ZH})")),
    (
        "cut",
        re.compile(
            r"(?P<f>[，,]?(?:而不是|而非|代替了?|取代了?)(?P<p>[^，,。！？；]{1,12}))"
        ),
    ),
]
# A verb in front of the old value says how it was done, not what it was:
# "instead of taking the train" gave up the train.
_LEAD_VERB = re.compile(r"^\w+ing\s+(?=\S)", re.I)


@dataclass(frozen=True, slots=True)
class Change:
    """A statement with its old value taken out.

    ``text`` says the new value ("I've switched to black coffee"); ``previous``
    is the old value as said ("green tea"), ``""`` when none is named.
    """

    text: str
    previous: str = ""


def split_change(text: str) -> Change:
    """The statement's old value, if it names one, and the rest of it.

    Example:
        >>> split_change("I've switched from green tea to black coffee")
        Change(text="I've switched to black coffee", previous='green tea')
        >>> split_change("我从武汉搬到了长沙")
        Change(text='我搬到了长沙', previous='武汉')
        >>> split_change("I replaced milk with oat milk")
        Change(text='I switched to oat milk', previous='milk')
    """
    for kind, pattern in _FRAMES:
        m = pattern.search(text)
        if m is None:
            continue
        previous = m.group("p").strip()
        if not previous:
            continue
        start, end = m.span("f")
        filler = "switched to " if kind == "rewrite" else ""
        rest = " ".join((text[:start] + filler + text[end:]).split())
        return Change(rest, previous)
    return Change(text)


def without_verb(previous: str) -> str:
    """The old value without a leading verb ("taking the train" -> "the train").

    Example:
        >>> without_verb("drinking green tea"), without_verb("green tea")
        ('green tea', 'green tea')
    """
    return _LEAD_VERB.sub("", previous)
