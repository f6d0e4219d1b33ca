"""Names used to address someone, not to speak about them.

In a conversation the listener's name turns up in nearly every other turn:
"Thanks, Mel!", "Wow, Melanie, that's amazing!", "Hey Jon! Long time no
see". A memory that names a person only this way was said *to* them; it
says nothing about them. A question about that person ("What does Melanie
do to relax?") is answered by what they said and by what was said about
them, so recall's entity path should not count such a mention as a match.

The rule is a reading of punctuation, not of a language model: a name is
a vocative when it stands at the start of a sentence (or after a greeting
word such as "hey" or "thanks") or after a comma, and is followed by
punctuation or the end of the text. "I went hiking with Melanie." names
her as a participant (after "with"), so it still counts.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# Words that open a greeting or an address: "Hey Jon!", "Thanks Mel,".
_GREETINGS = (
    "hey|hi|hello|hiya|yo|thanks|thank you|thx|bye|goodbye|cheers|oh|wow|"
    "aw|aww|congrats|congratulations|dear|morning|good morning|good night|"
    "sorry|ok|okay|yes|yeah|no|sure|great|awesome|haha|lol"
)


@functools.lru_cache(maxsize=4096)
def _pattern(name: str) -> re.Pattern[str]:
    # A vocative, or any other mention: compiled once per name asked about.
    n = re.escape(name)
    lead = rf"(?:^|[.!?;:…]\s*|,\s*|\b(?:{_GREETINGS})[,!]?\s+)"
    return re.compile(
        rf"(?P<vocative>{lead}{n}(?=\s*(?:[,.!?;:…)]|$)))|(?P<any>\b{n}\b)",
        re.IGNORECASE,
    )


def only_addressed(text: str, names: Iterable[str]) -> bool:
    """Whether every mention in ``text`` of any of ``names`` addresses them.

    False when no name is mentioned at all (nothing to discount), and when
    one mention speaks about the person.

    Example:
        >>> only_addressed("Glad you've got people to lean on, Melanie.", ["Melanie"])
        True
        >>> only_addressed("Hey Jon! I met Melanie at the park.", ["Melanie"])
        False
        >>> only_addressed("I went hiking with Melanie.", ["Melanie"])
        False
    """
    seen = False
    for name in names:
        if not name or not name[:1].isalpha():
            continue
        for m in _pattern(name).finditer(text):
            seen = True
            if m.group("vocative") is None:
                return False
    return seen
