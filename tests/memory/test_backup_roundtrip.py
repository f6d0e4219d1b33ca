"""Every backup restores: what the store accepts at its limits exports and imports back."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import (
    MAX_DOC_BYTES,
    MAX_ID_BYTES,
    MAX_NAME_BYTES,
    Where,
)
from hindsight_lg.memory.jobs.portability import export_namespace, import_namespace
from hindsight_lg.model import Kind, MemoryRecord, Status
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
from tests.memory._meta import meta_ok

# One character of each width and of each kind that JSON escapes or that
# tests a limit: 1, 2, 3 and 4 bytes of UTF-8, a control, a separator, NUL
# and a lone surrogate (the last two must be refused, never half-stored).
PIECES = ["x", "é", "数", "😀", "\x01", "\u2028", '"', "\\"]
POISON = ["\x00", "\ud800"]


@st.composite
def big_text(draw: Any, limit: int) -> str:
    """Text of one or two repeated characters, up to about ``limit`` bytes."""
    # Poison is rare: one field of it makes the whole record refused.
    pieces = PIECES + POISON if draw(st.integers(0, 40)) == 0 else PIECES
    a, b = draw(st.sampled_from(pieces)), draw(st.sampled_from(pieces))
    n = draw(st.integers(0, limit))
    return a * (n // 2) + draw(st.text(max_size=8)) + b * (n // 8)


RECORDS = st.lists(
    st.builds(
        MemoryRecord,
        namespace=st.just("src"),
        content=big_text(MAX_DOC_BYTES // 4).filter(bool),
        summary=big_text(2000),
        id=st.builds(
            lambda c, n: (c * n)[:n],
            st.sampled_from(["a", "é", "数", "😀"]),
            st.integers(1, MAX_ID_BYTES + 4),
        ),
        agent_id=big_text(MAX_NAME_BYTES // 2),
        thread_id=big_text(MAX_NAME_BYTES // 2),
        kind=st.sampled_from(list(Kind)),
        status=st.sampled_from(list(Status)),
        entities=st.lists(big_text(400), max_size=4),
        participants=st.lists(big_text(200), max_size=3),
        source_ids=st.lists(big_text(200), max_size=3),
        # What remember() accepts: reserved keys hold what their readers use.
        meta=st.dictionaries(st.text(max_size=5), big_text(3000), max_size=3).filter(
            meta_ok
        ),
    ),
    min_size=1,
    max_size=3,
)


def _memory() -> HindsightMemory:
    return HindsightMemory(InMemoryBackend(), HashingEmbedder(), cache=False)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(records=RECORDS)
def test_whatever_the_store_accepts_exports_and_imports_back(
    records: list[MemoryRecord],
) -> None:
    """Records at the size limits: refused by the store, or restored exactly."""
    source, target = _memory(), _memory()
    vector = [float(x) for x in source.embedder.embed(["x"])[0]]
    accepted = []
    for r in records:
        r.dense = list(vector)
        try:
            source.backend.upsert("src", [r])
        except ValueError:
            continue  # refused at the door: nothing of it is stored
        accepted.append(r)
    assume(accepted)
    buffer = io.StringIO()
    export_namespace(source, "src", buffer, vectors=True)
    import_namespace(target, io.StringIO(buffer.getvalue()), namespace="dst")
    got = {r.id: r.to_dict() for r in target.backend.query("dst", _all(), limit=99)}
    stored = {r.id: r.to_dict() for r in source.backend.query("src", _all(), limit=99)}
    for row in stored.values():
        row["namespace"] = "dst"
    assert got == stored


def _all() -> Where:
    return Where(statuses=())


def _export_with(meta_store: dict[str, Any]) -> str:
    """An export of one store item whose stored metadata is ``meta_store``."""
    memory = _memory()
    store = HindsightStore(memory)
    store.put(("memories", "mallory"), "k", {"content": "a note"}, ttl=5.0)
    buffer = io.StringIO()
    export_namespace(memory, "mallory", buffer)
    lines = buffer.getvalue().splitlines()
    out = []
    for line in lines:
        body = json.loads(line)
        if body.get("type") == "record":
            body["data"]["meta"]["store"].update(meta_store)
        out.append(json.dumps(body))
    return "\n".join(out) + "\n"


@pytest.mark.parametrize(
    "bad",
    [
        {"expires_at": "soon"},
        {"ttl": "forever"},
        {"namespace": "memories"},
        {"namespace": [1, 2]},
        {"value": "not an object"},
        {"seq": 1.5},
    ],
)
def test_import_refuses_store_metadata_its_readers_cannot_use(
    bad: dict[str, Any],
) -> None:
    """A damaged meta.store field fails the import, not every later store read."""
    target = _memory()
    with pytest.raises(ValueError, match="meta.store"):
        import_namespace(target, io.StringIO(_export_with(bad)), namespace="mallory")
    assert target.namespaces() == []


def test_a_forged_store_namespace_cannot_show_as_another_users_item() -> None:
    """Labels naming another user in the file are ignored: the tenant decides."""
    target = _memory()
    forged = _export_with({"namespace": ["memories", "victim"]})
    import_namespace(target, io.StringIO(forged), namespace="mallory")
    store = HindsightStore(target)
    items = store.search(("memories",))
    assert [i.namespace for i in items] == [("memories", "mallory")]
    assert store.search(("memories", "victim")) == []
    assert store.list_namespaces() == [("memories", "mallory")]
    assert store.sweep_ttl() == 0


def _stored_size(record: MemoryRecord) -> int:
    doc = record.to_dict(vectors=False)
    return len(json.dumps(doc, ensure_ascii=False, separators=(",", ":")).encode())


def test_an_item_near_the_size_limit_imports_into_a_short_namespace() -> None:
    """Sized under the namespace it goes to: it fits under "dst", not under a long one."""
    source = _memory()
    record = MemoryRecord(namespace="src", content="I like tea", meta={"notes": ""})
    record.meta["notes"] = "n" * (MAX_DOC_BYTES - 100 - _stored_size(record))
    record.dense = [float(x) for x in source.embedder.embed(["x"])[0]]
    source.backend.upsert("src", [record])
    buffer = io.StringIO()
    export_namespace(source, "src", buffer, vectors=True)

    short = _memory()
    import_namespace(short, io.StringIO(buffer.getvalue()), namespace="dst")
    (got,) = short.backend.query("dst", _all(), limit=9)
    assert got.meta == record.meta

    long_name = "t" * 300
    refused = _memory()
    with pytest.raises(ValueError, match="over the limit of"):
        import_namespace(refused, io.StringIO(buffer.getvalue()), namespace=long_name)
    assert refused.backend.query(long_name, _all(), limit=9) == []
