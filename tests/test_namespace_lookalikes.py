"""A tenant id cannot look like another: invisible and blank characters are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg._text import one_visible_line
from hindsight_lg.backends.base import check_namespace
from hindsight_lg.cli import main
from hindsight_lg.identity import find_identity
from hindsight_lg.tenancy import user_tenant

# Default_Ignorable_Code_Point, from Unicode's DerivedCoreProperties.txt.
DEFAULT_IGNORABLE = [
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul choseong / jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors, vowel separator
    (0x200B, 0x200F),  # zero-width space, joiners, LRM, RLM
    (0x202A, 0x202E),  # bidi embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, isolates
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space (BOM)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # reserved specials
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical formatting
    (0xE0000, 0xE0FFF),  # tags, variation selectors supplement, reserved
]
# Blank look-alikes outside that property: the braille blank and every space
# that shows as a plain one (no-break, ideographic, em, line separator...).
BLANK_FILLERS = [
    (0x2800, 0x2800),
    (0x00A0, 0x00A0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
]
INVISIBLE = st.sampled_from(DEFAULT_IGNORABLE + BLANK_FILLERS).flatmap(
    lambda span: st.integers(span[0], span[1]).map(chr)
)


def accepted(namespace: str) -> bool:
    """Whether ``check_namespace`` lets ``namespace`` through."""
    try:
        check_namespace(namespace)
    except ValueError:
        return False
    return True


NAMESPACES = st.text(
    st.characters(categories=["L", "N", "P", "S"]), min_size=1, max_size=24
).filter(accepted)


@given(NAMESPACES, INVISIBLE, st.integers(min_value=0))
def test_an_invisible_character_anywhere_in_a_namespace_is_refused(
    namespace: str, hidden: str, at: int
) -> None:
    """A default-ignorable code point or blank filler at any position is a ValueError."""
    at %= len(namespace) + 1
    with pytest.raises(ValueError, match="would look like another tenant: remove it"):
        check_namespace(namespace[:at] + hidden + namespace[at:])


@pytest.mark.parametrize(
    ("namespace", "named"),
    [
        ("alice\ufe0f", "U+FE0F VARIATION SELECTOR-16"),
        ("alice\u034f", "U+034F COMBINING GRAPHEME JOINER"),
        ("alice\u115f", "U+115F HANGUL CHOSEONG FILLER"),
        ("alice\u3164", "U+3164 HANGUL FILLER"),
        ("alice\U000e0100", "U+E0100 VARIATION SELECTOR-17"),
    ],
)
def test_the_reported_look_alikes_of_alice_are_refused_by_name(
    namespace: str, named: str
) -> None:
    """Each look-alike is refused, the error naming the character and what to do."""
    with pytest.raises(ValueError) as refused:
        check_namespace(namespace)
    assert (named in str(refused.value), "user_tenant()" in str(refused.value)) == (
        True,
        True,
    )


@given(st.characters())
def test_what_a_prompt_or_panel_line_would_hide_no_namespace_holds(ch: str) -> None:
    """A character one_visible_line (and so inert) drops or blanks is refused in a namespace."""
    namespace = f"a{ch}b"
    if one_visible_line(namespace) != namespace:
        assert not accepted(namespace)


@pytest.mark.parametrize(
    "user", ["alice\ufe0f", "alice\u034f", "alice\u115f", "alice\u3164", "alice\u00a0"]
)
def test_a_look_alike_user_id_gets_its_own_visibly_different_tenant(user: str) -> None:
    """A run for such a user lands in an escaped tenant, never one that reads 'alice'."""
    identity = find_identity({"configurable": {"user_id": user}})
    assert identity is not None
    tenant = identity.namespace
    assert (tenant == user_tenant(user), tenant.startswith("%@alice%")) == (True, True)
    assert (accepted(tenant), one_visible_line(tenant) == tenant) == (True, True)


def test_the_cli_refuses_a_look_alike_namespace_before_opening_a_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-n 'alice<U+FE0F>'`` is a usage error naming the character; no store is touched."""
    db = tmp_path / "hindsight.db"
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["list", "-n", "alice\ufe0f", "--uri", str(db)])
    err = capsys.readouterr().err
    assert (exited.value.code, "U+FE0F" in err, db.exists()) == (2, True, False)
