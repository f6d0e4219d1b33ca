"""Does a new statement replace, correct, add to or leave alone an earlier one?

Both statements are read as slots (:mod:`.slots`); the decision depends on
the slots and the new statement's cues, never on the kind the classifier gave
either, nor on the words they share:

- different subject or attribute, a question, a supposition ("If I moved to
  Paris", "I might switch"), or a denial of some other value ("I don't live
  in Paris"): **ignore**;
- the old value named as given up ("I've switched *from green tea* to black
  coffee", "我从武汉搬到了长沙", "I walk instead of *driving*") or stopped
  ("I *gave up* chocolate", "我戒了可乐"), whatever attribute each was read
  as: **replace** (or **correct**); a statement that gives up some other
  value leaves this one alone ("I switched from tea to coffee" keeps "I
  drink water");
- the same value again, in any words: **reinforce** (a restatement), unless
  the new one says it switched to it from a value like it ("改喝豆浆" after
  "喝牛奶");
- the same value denied ("I no longer take the train"), or a different value
  of an attribute held one at a time (where one lives), or of any attribute
  with a change cue ("These days I drink coffee"): **replace**, or
  **correct** when the new statement says the old one was wrong;
- otherwise a different value beside the old one ("I also enjoy espresso"):
  **add**.

Replace and correct supersede the old memory; the others keep it active.
"""

from __future__ import annotations

from enum import StrEnum

from hindsight_lg._text import has_cjk
from hindsight_lg.memory.language.frames import without_verb
from hindsight_lg.memory.language.lexicon import same_value
from hindsight_lg.memory.language.slots import THIRD_PERSON, Reading, read, value_key

# Attributes that hold many values at once (one likes hiking and Redis).
MANY_VALUED = frozenset({"likes"})


class Decision(StrEnum):
    """What a new statement does to an earlier one on the same subject."""

    REPLACE = "replace"
    CORRECT = "correct"
    ADD = "add"
    REINFORCE = "reinforce"
    IGNORE = "ignore"

    @property
    def supersedes(self) -> bool:
        """Whether the earlier memory stops being current."""
        return self in (Decision.REPLACE, Decision.CORRECT)


def decide(new: Reading | None, old: Reading | None) -> Decision:
    """The decision for two readings (see the module docstring).

    Example:
        >>> decide(read("我上个月搬到深圳了"), read("我住在杭州"))
        <Decision.REPLACE: 'replace'>
        >>> decide(read("I also enjoy a good espresso"), read("I like green tea"))
        <Decision.ADD: 'add'>
    """
    if new is None or old is None or not _same_subject(new, old):
        return Decision.IGNORE
    supposed = new.question or new.hypothetical or old.hypothetical or old.question
    changed = Decision.CORRECT if new.correction else Decision.REPLACE
    if not supposed and not old.negated and _gives_up(new, old):
        return changed
    if new.attribute != old.attribute:
        # "I use Slack" and "I use Notion as well": tools side by side, of
        # whatever category; any other pair of attributes is unrelated.
        both_tools = {new.attribute.split(":")[0], old.attribute.split(":")[0]} == {
            "uses"
        }
        plain = not (new.question or new.hypothetical or new.negated)
        return Decision.ADD if both_tools and plain else Decision.IGNORE
    if supposed:
        return Decision.IGNORE
    if same_value(new.value, old.value):
        if new.negated != old.negated:
            return changed
        if new.switched and not new.previous and new.value != old.value:
            return changed  # "我早上改喝豆浆了" after "我早上喝牛奶" ("milk")
        return Decision.REINFORCE
    if new.negated:
        return Decision.IGNORE  # "I don't live in Paris" leaves Hangzhou alone
    if old.negated:
        return Decision.ADD  # "I don't drink coffee", then "I drink tea"
    if new.previous and not new.single_valued:
        return Decision.ADD  # it gave up something else: "I drink water" stays
    if new.addition and not new.correction:
        return Decision.ADD
    if new.single_valued or new.correction:
        return changed
    if new.change and not _many_valued(new):
        return changed
    # "Actually Redis is fine now" changes the view of Redis, not of hiking:
    # a change to another value of a many-valued attribute adds beside it.
    return Decision.ADD


def _many_valued(reading: Reading) -> bool:
    """What someone likes or dislikes: many values at a time, none replaced."""
    return reading.attribute in MANY_VALUED


def _gives_up(new: Reading, old: Reading) -> bool:
    """Whether ``new`` names ``old``'s value as what it switched from or stopped.

    The old value is read as ``old``'s attribute ("the bus" as a commute is
    "bus"), so "I gave up chocolate" finds "I eat a lot of chocolate" and
    "I switched from Python to Rust" finds "I'm into Python".
    """
    if new.previous:
        said = (new.previous, without_verb(new.previous))
        return any(_same_head(value_key(p, old.attribute), old.value) for p in said)
    if not (new.negated and new.change) or new.attribute == old.attribute:
        return False  # the same attribute: a denial is judged below
    said = (new.raw_value, without_verb(new.raw_value))
    return any(_same_head(value_key(p, old.attribute), old.value) for p in said)


def _same_head(given_up: str, old: str) -> bool:
    """One thing: the same value, ending in the same word ("tea", "green tea").

    Stricter than :func:`same_value` across attributes: giving up coffee is
    not giving up "coffee shops".
    """
    if not given_up or not old:
        return False
    if has_cjk(given_up) or has_cjk(old):
        # "打篮球" and "篮球"; "Vim写代码" names Vim (a Latin name, then Chinese).
        latin_head = not has_cjk(given_up) and old.startswith(given_up)
        return old.endswith(given_up) or given_up.endswith(old) or latin_head
    a, b = given_up.split(), old.split()
    return a[-1] == b[-1] and same_value(given_up, old)


def _same_subject(new: Reading, old: Reading) -> bool:
    """One person: equal, or a relation and its name ("my sister" and "Mei")."""
    a, b = new.subject, old.subject
    if THIRD_PERSON in (a, b):
        return "user" not in (a, b)  # "her name is Lucy"
    if a == b:
        return True
    rel_a, _, name_a = a.partition(":")
    rel_b, _, name_b = b.partition(":")
    if name_a and name_a in (name_b, rel_b) or name_b and name_b == rel_a:
        return True  # "my sister Mei" and "Mei"
    return rel_a == rel_b and not (name_a and name_b)


def judge_texts(new: str, old: str) -> Decision:
    """:func:`decide` on two statements as text."""
    return decide(read(new), read(old))
