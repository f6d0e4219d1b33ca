"""Milvus filter expressions: literals are escaped, never interpolated raw."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.backends.base import Where
from hindsight_lg.backends.milvus._expr import lit, lits, num, where_expr


def test_lit_escapes_quotes_and_backslashes() -> None:
    """Quotes and backslashes cannot end the literal early."""
    assert '"a\\"b\\\\c"' == lit('a"b\\c')


@given(
    st.text(
        alphabet=st.characters(
            min_codepoint=32, blacklist_characters="\x7f", blacklist_categories=("Cs",)
        )
    )
)
def test_lit_round_trips(value: str) -> None:
    """Unescaping a literal gives back the original string."""
    body = lit(value)[1:-1]
    unescaped = body.replace('\\"', '"').replace("\\\\", "\\")
    assert value == unescaped.replace("\\\\", "\\") or value == unescaped


@pytest.mark.parametrize("bad", ["a\nb", "x\x00", "\x1b[31m", "tab\there", "\ud800"])
def test_lit_refuses_control_characters(bad: str) -> None:
    """No legitimate id holds control characters or lone surrogates: refused."""
    with pytest.raises(ValueError, match="control"):
        lit(bad)


def test_lit_refuses_non_strings() -> None:
    """Only strings become string literals."""
    with pytest.raises(TypeError):
        lit(3)  # type: ignore[arg-type]


def test_lits_and_num() -> None:
    """Lists of literals and finite numbers render as Milvus expects."""
    assert ('["a", "b"]', "1.5") == (lits(["a", "b"]), num(1.5))
    with pytest.raises(ValueError):
        num(float("nan"))


def test_where_expr_joins_every_condition() -> None:
    """Every Where field becomes one clause, namespace first."""
    expr = where_expr(
        "u1",
        Where(
            statuses=("active",),
            kinds=("task",),
            tiers=("episodic",),
            ids=("x",),
            thread_id="t",
            reader="a",
            since=1.0,
            until=2.0,
            min_strength=0.5,
        ),
    )
    assert expr == (
        'namespace == "u1" and status in ["active"] and kind in ["task"] and '
        'tier in ["episodic"] and id in ["x"] and thread_id == "t" and '
        "event_time >= 1.0 and event_time < 2.0 and strength >= 0.5 and "
        '(scope != "private" or agent_id in ["", "a"])'
    )


def test_injection_attempt_stays_inside_the_literal() -> None:
    """A namespace crafted to close the string stays one escaped literal."""
    expr = where_expr('x" or namespace != "', Where(statuses=()))
    assert 'namespace == "x\\" or namespace != \\""' == expr


def test_a_refused_expression_is_told_by_the_servers_reason_not_its_words() -> None:
    """An expression holding "lock" or "timeout" is still a plain query error.

    Milvus 2.3 puts the whole expression before its reason; a long one (many
    query terms) used to push "unsupported pattern" past the cut, so the
    prefix-match fallback never ran and capture failed on the server.
    """
    from hindsight_lg.backends.milvus._core import _translate
    from hindsight_lg.errors import StoreError, StoreLocked, StoreTimeout

    terms = " or ".join(f'lexical like "%{w}%"' for w in ["lock", "timeout"] * 20)
    exc = Exception(
        f"<MilvusException: (code=65535, message=cannot parse expression: ({terms}), "
        "error: unsupported pattern: %lock%, only prefix pattern match like ab% "
        "and equal match like ab(no wildcards) are supported)>"
    )
    err = _translate(exc, "querying")
    assert type(err) is StoreError and not isinstance(err, StoreLocked | StoreTimeout)
    assert "unsupported pattern" in str(err)
