"""Filter-expression escaping: hostile strings stay data, never become syntax."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.memory.model import MemoryRecord
from hindsight_lg.store._expr import lit, lits, where_expr
from hindsight_lg.store.base import Where, check_namespace
from hindsight_lg.store.milvus import MilvusBackend
from hindsight_lg.testing import HashingEmbedder

HOSTILE = [
    'u1" or 1==1 or namespace == "',
    '" or namespace != "',
    "u1\\",
    'u1\\" or 1==1 #',
    "u1' or '1'=='1",
    '\\\\\\"',
    "u1）or（1==1",
    "ｕ１＂ or 1==1",
    "u1\u201d or 1==1",
    '%" or lexical like "%',
    "\\u0022 or 1==1",
    '名前空間" || true || "',
]
REJECTED = ["u1\x00", "u1\n or 1==1", "a\x1fb", "\x7f", "u1\u202eevil", "u1\u200b"]

_SAFE_TEXT = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Cf")),
    min_size=1,
    max_size=40,
).filter(lambda s: s.strip() != "")


def test_lit_escapes_quotes_and_backslashes() -> None:
    """A quote or backslash is escaped so the literal cannot be closed early."""
    assert lit('a"b') == '"a\\"b"'
    assert lit("a\\b") == '"a\\\\b"'
    assert lit('\\"') == '"\\\\\\""'


@pytest.mark.parametrize("value", ["a\x00", "a\nb", "\x1b[2J", "a\ud800"])
def test_lit_rejects_control_and_surrogate_characters(value: str) -> None:
    """Control and surrogate characters are a clear ValueError, never sent."""
    with pytest.raises(ValueError, match="not allowed"):
        lit(value)


def test_lit_rejects_non_strings() -> None:
    """Only strings become string literals."""
    with pytest.raises(TypeError):
        lit(1)  # type: ignore[arg-type]


@pytest.mark.parametrize("namespace", REJECTED)
def test_check_namespace_rejects_hidden_characters(namespace: str) -> None:
    """NUL, newlines, bidi overrides and zero-width marks are refused as tenant ids."""
    with pytest.raises(ValueError, match="namespace must not contain"):
        check_namespace(namespace)


@given(_SAFE_TEXT)
def test_lit_is_one_balanced_literal(value: str) -> None:
    """Every escaped literal opens and closes exactly once, whatever it holds."""
    text = lit(value)
    inner = text[1:-1]
    unescaped_quotes = 0
    i = 0
    while i < len(inner):
        if inner[i] == "\\":
            i += 2
            continue
        unescaped_quotes += inner[i] == '"'
        i += 1
    assert (text[0], text[-1], unescaped_quotes) == ('"', '"', 0)


def test_where_expr_quotes_every_string() -> None:
    """Ids, thread and reader reach the filter only as escaped literals."""
    expr = where_expr(
        'n"s', Where(ids=('x" or 1==1',), thread_id="t\\", reader='a" or "1')
    )
    assert 'namespace == "n\\"s"' in expr
    assert 'id in ["x\\" or 1==1"]' in expr
    assert 'thread_id == "t\\\\"' in expr
    assert lits(["", 'a" or "1']) in expr


@pytest.fixture(scope="module")
def lite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusBackend]:
    backend = MilvusBackend(str(tmp_path_factory.mktemp("expr") / "m.db"))
    backend.setup(dim=HashingEmbedder().dim, model_id=HashingEmbedder().model_id)
    yield backend
    backend.close()


def _record(namespace: str, text: str = "likes green tea") -> MemoryRecord:
    return MemoryRecord(
        namespace=namespace,
        content=text,
        dense=[float(x) for x in HashingEmbedder().embed([text])[0]],
    )


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_namespace_reads_only_itself_on_milvus(
    lite: MilvusBackend, hostile: str
) -> None:
    """A namespace built to break the filter sees its own record and no other."""
    victim, own = _record("victim"), _record(hostile)
    lite.upsert("victim", [victim])
    lite.upsert(hostile, [own])
    found = lite.query(hostile, Where(statuses=()), limit=100)
    hits = lite.search_dense(hostile, own.dense, Where(statuses=()), limit=50)
    assert [r.id for r in found] == [own.id]
    assert [h.record.id for h in hits] == [own.id]
    assert lite.get(hostile, [victim.id]) == []


@pytest.mark.parametrize("hostile", HOSTILE)
def test_hostile_ids_and_readers_match_nothing_extra(
    lite: MilvusBackend, hostile: str
) -> None:
    """Hostile ids, thread ids and readers match literally or not at all."""
    lite.upsert("victim2", [_record("victim2")])
    where = Where(statuses=(), ids=(hostile,), thread_id=hostile, reader=hostile)
    assert lite.query("victim2", where) == []
    assert lite.edges("victim2", [hostile]) == []
    assert lite.audit("victim2", hostile) == []


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(namespace=_SAFE_TEXT)
def test_any_printable_namespace_round_trips_on_milvus(
    lite: MilvusBackend, namespace: str
) -> None:
    """Whatever printable text a namespace holds, Milvus finds exactly its records."""
    record = _record(namespace)
    lite.upsert(namespace, [record])
    assert record.id in {r.id for r in lite.query(namespace, Where(statuses=()))}
    assert all(r.namespace == namespace for r in lite.query(namespace, Where()))


def test_public_api_rejects_nul_and_keeps_quotes_inert(tmp_path: Path) -> None:
    """Through HindsightMemory: NUL is a ValueError; quotes in a tenant id leak nothing."""
    with HindsightMemory.from_uri(
        str(tmp_path / "api.db"), embedder=HashingEmbedder()
    ) as memory:
        memory.capture("I prefer green tea over coffee", namespace="alice")
        with pytest.raises(ValueError):
            memory.recall("tea", namespace="alice\x00")
        with pytest.raises(ValueError):
            memory.capture("text with NUL \x00 inside", namespace="alice")
        sneaky = 'bob" or namespace == "alice'
        assert memory.list_memories(sneaky) == []
        assert memory.recall("green tea", namespace=sneaky, timeout=None).records == []
