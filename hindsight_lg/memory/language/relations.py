"""Coreference the encoder can see: names introduced with a relation word.

"My sister Mei lives in Chengdu", "Mei, my sister, ...", "my dog's name is
Biscuit", "Melanie's husband John", "我妹妹小美住在成都", "我的狗叫豆豆": the
relation word and the name refer to one person (or pet). Recall uses these
to read "my sister" in a question as "Mei" (see ``recall/search.py``). The
patterns are keyword lists a reader can check, like the rest of the encoder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Capitalised words that are not names.
NOT_NAMES = frozenset(
    "I I'm I've I'll I'd Im The A An And But So Also Then Yes No Ok "
    "Okay My We You He She They It This That What When Where Why How "
    "Hey Hi Hello Oh Well Actually Thanks Please Maybe Sure Wow "
    "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Today "
    "Tomorrow Yesterday Just Do Did Does Can Could Would Should Is "
    "Are Was Were Have Has Had Let Lol Haha Yeah Not Don't".split()
)

_REL_EN = (
    r"sister|brother|wife|husband|son|daughter|mom|mum|mother|dad|father|"
    r"friend|best friend|boss|manager|partner|colleague|coworker|co-worker|cousin|"
    r"aunt|uncle|niece|nephew|grandma|grandmother|grandpa|grandfather|roommate|"
    r"girlfriend|boyfriend|fianc[eé]e?|neighbou?r|teacher|doctor|dentist|coach|"
    r"mentor|dog|cat|puppy|kitten|pet|kid|child|baby"
)
_REL_ZH = (
    "好朋友|男朋友|女朋友|妹妹|姐姐|哥哥|弟弟|妈妈|母亲|爸爸|父亲|老婆|老公|妻子|丈夫|"
    "儿子|女儿|朋友|同事|老板|经理|室友|邻居|表妹|表姐|表哥|表弟|老师|医生|狗|猫"
)
# A capitalised word starts only where no word character or hyphen stands
# before it, and is read whole (``++``): otherwise every letter of a long
# hyphenated run ("A-A-A-...") would start a scan to the run's end, which
# is quadratic in the run's length.
_WORD = r"(?<![\w-])[A-Z][\w-]++"
_OWNER = rf"(?P<owner>[Mm]y|[Oo]ur|{_WORD}'s)"
_ADJ = r"(?:(?:older|younger|little|big|baby|twin|new|old|best)\s+)?"
_NAME = rf"(?P<name>{_WORD}(?:\s++{_WORD})?)"
_REL_AFTER = re.compile(
    rf"\b{_OWNER}\s+{_ADJ}(?P<rel>{_REL_EN})"
    rf"(?:'s name is|,| is called| is named| named| called)?\s+{_NAME}"
)
_REL_BEFORE = re.compile(rf"\b{_NAME},\s+{_OWNER}\s+{_ADJ}(?P<rel>{_REL_EN})\b")
_REL_ZH_NAME = re.compile(
    rf"我的?(?P<rel>{_REL_ZH})(?:叫|名叫|名字叫)?"
    r"(?P<name>[\u4e00-\u9fff]{2,3}?)"
    r"(?=[住在是喜今明昨下上去也很都要会想从和的说有怕爱做每刚已，,。！!？?\s]|$)"
)
_REL_ZH_MENTION = re.compile(rf"我的?(?P<rel>{_REL_ZH})")
_REL_EN_MENTION = re.compile(rf"\b{_OWNER}\s+{_ADJ}(?P<rel>{_REL_EN})\b")
# Characters a Chinese name does not start with: they open the predicate.
_ZH_NOT_NAME = frozenset("在是住喜今明昨去也很都要会想从和的叫有没不说怕爱做每刚已")


@dataclass(frozen=True, slots=True)
class Relation:
    """A relation word tied to whose it is and, when introduced, a name.

    ``owner`` is ``"my"`` for the speaker's own ("my sister", "我妹妹") or a
    name ("Melanie's husband").
    """

    rel: str
    owner: str
    name: str = ""


def _owner(raw: str) -> str:
    low = raw.lower()
    return "my" if low in ("my", "our") else raw[:-2]


def relations(text: str) -> list[Relation]:
    """Names introduced with a relation word, in order of appearance.

    Example:
        >>> [(r.rel, r.name) for r in relations("My sister Mei lives in Chengdu.")]
        [('sister', 'Mei')]
        >>> [(r.rel, r.name) for r in relations("我妹妹小美住在成都。")]
        [('妹妹', '小美')]
    """
    found: list[tuple[int, Relation]] = []
    for pattern in (_REL_AFTER, _REL_BEFORE):
        for m in pattern.finditer(text):
            name = m.group("name")
            if name.split()[0] in NOT_NAMES:
                continue
            rel = Relation(m.group("rel").lower(), _owner(m.group("owner")), name)
            found.append((m.start(), rel))
    for m in _REL_ZH_NAME.finditer(text):
        if m.group("name")[0] not in _ZH_NOT_NAME:
            found.append((m.start(), Relation(m.group("rel"), "my", m.group("name"))))
    found.sort(key=lambda pair: pair[0])
    return list(dict.fromkeys(r for _, r in found))


def relation_mentions(text: str) -> list[Relation]:
    """Relation words a question asks about ("my sister", "Melanie's husband").

    Example:
        >>> relation_mentions("Where does my sister work?")
        [Relation(rel='sister', owner='my', name='')]
    """
    found = [
        (m.start(), Relation(m.group("rel").lower(), _owner(m.group("owner"))))
        for m in _REL_EN_MENTION.finditer(text)
    ]
    found += [
        (m.start(), Relation(m.group("rel"), "my"))
        for m in _REL_ZH_MENTION.finditer(text)
    ]
    found.sort(key=lambda pair: pair[0])
    return list(dict.fromkeys(r for _, r in found))


def substitute(text: str, names: list[str]) -> str:
    """``text`` with each relation phrase it asks about replaced by ``names``.

    Example:
        >>> substitute("Where does my sister work?", ["Mei"])
        'Where does Mei work?'
        >>> substitute("我妹妹在哪里工作？", ["小美"])
        '小美在哪里工作？'
    """
    joined = " or ".join(names)
    out = _REL_EN_MENTION.sub(joined, text)
    return _REL_ZH_MENTION.sub(joined, out)
