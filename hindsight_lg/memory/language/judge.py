"""Does a new statement replace, correct, add to or leave alone an earlier one?

Both statements are read as slots (:mod:`.slots`); the decision depends on
the slots and the new statement's cues, never on the kind the classifier gave
either, nor on the words they share:

- different subject or attribute, a question, a supposition ("If I moved to
  Paris", "I might switch"), or a denial of some other value ("I don't live
  in Paris"): **ignore**;
- the same value again, in any words: **reinforce** (a restatement);
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

from hindsight_lg.memory.language.lexicon import same_value
from hindsight_lg.memory.language.slots import THIRD_PERSON, Reading, read


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
    if new.attribute != old.attribute:
        # "I use Slack" and "I use Notion as well": tools side by side, of
        # whatever category; any other pair of attributes is unrelated.
        both_tools = {new.attribute.split(":")[0], old.attribute.split(":")[0]} == {
            "uses"
        }
        plain = not (new.question or new.hypothetical or new.negated)
        return Decision.ADD if both_tools and plain else Decision.IGNORE
    if new.question or new.hypothetical or old.hypothetical or old.question:
        return Decision.IGNORE
    changed = Decision.CORRECT if new.correction else Decision.REPLACE
    if same_value(new.value, old.value):
        return changed if new.negated != old.negated else Decision.REINFORCE
    if new.negated:
        return Decision.IGNORE  # "I don't live in Paris" leaves Hangzhou alone
    if old.negated:
        return Decision.ADD  # "I don't drink coffee", then "I drink tea"
    if new.addition and not new.correction:
        return Decision.ADD
    if new.single_valued or new.change or new.correction:
        return changed
    return Decision.ADD


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
