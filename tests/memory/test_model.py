"""The memory model: records, edges and audit entries survive their dict form."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    Scope,
    SourceKind,
    Status,
    Tier,
)

text = st.text(max_size=40)
finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
unit = st.floats(min_value=0.0, max_value=1.0)

records = st.builds(
    MemoryRecord,
    namespace=st.text(min_size=1, max_size=20),
    content=text,
    kind=st.sampled_from(Kind),
    agent_id=text,
    scope=st.sampled_from(Scope),
    tier=st.sampled_from(Tier),
    summary=text,
    dense=st.lists(finite, max_size=8),
    sparse=st.dictionaries(st.integers(0, 10_000), finite, max_size=5),
    event_time=finite,
    created_at=finite,
    valid_until=st.none() | finite,
    importance=unit,
    confidence=unit,
    access_count=st.integers(0, 1000),
    status=st.sampled_from(Status),
    superseded_by=st.none() | text,
    version=st.integers(1, 100),
    participants=st.lists(text, max_size=3),
    entities=st.lists(text, max_size=3),
    source_kind=st.sampled_from(SourceKind),
    source_ids=st.lists(text, max_size=3),
    mentioned_time=st.none() | finite,
    meta=st.dictionaries(st.text(min_size=1, max_size=5), st.integers() | text),
)


@given(records)
def test_record_round_trips_through_its_dict_and_json(record: MemoryRecord) -> None:
    """from_dict(to_dict(r)) gives back an equal record, also through JSON."""
    data = record.to_dict()
    assert record == MemoryRecord.from_dict(data)
    assert record == MemoryRecord.from_dict(json.loads(json.dumps(data)))


def test_to_dict_without_vectors_drops_them() -> None:
    """``vectors=False`` leaves the dense and sparse vectors out."""
    data = MemoryRecord(namespace="n", content="x", dense=[1.0]).to_dict(vectors=False)
    assert {"dense", "sparse"} & set(data) == set()


def test_from_dict_keeps_unknown_keys_in_meta() -> None:
    """Fields from a newer version are kept in ``meta``, not lost."""
    data = MemoryRecord(namespace="n", content="x").to_dict() | {"mood": "calm"}
    assert "calm" == MemoryRecord.from_dict(data).meta["mood"]


def test_enum_strings_become_enums() -> None:
    """Records built from plain strings hold enum members."""
    r = MemoryRecord(namespace="n", content="x", kind="task", status="cold")  # type: ignore[arg-type]
    assert (Kind.TASK, Status.COLD) == (r.kind, r.status)


def test_replace_copies_lists_and_meta() -> None:
    """A replaced copy shares no mutable state with the original."""
    r = MemoryRecord(namespace="n", content="x", entities=["A"], meta={"k": 1})
    copy = r.replace(content="y")
    copy.entities.append("B")
    copy.meta["k"] = 2
    assert (["A"], {"k": 1}, "y") == (r.entities, r.meta, copy.content)


@given(
    st.builds(
        Edge,
        namespace=st.text(min_size=1),
        src=text,
        dst=text,
        type=st.sampled_from(EdgeType),
        weight=finite,
        created_at=finite,
    )
)
def test_edge_round_trips(edge: Edge) -> None:
    """Edges survive their dict form."""
    assert edge == Edge.from_dict(edge.to_dict())


def test_edge_key_is_one_per_src_type_dst() -> None:
    """Two edges differing only in weight share a key."""
    a = Edge("n", "x", "y", EdgeType.CAUSES, 0.2)
    b = Edge("n", "x", "y", EdgeType.CAUSES, 0.9)
    assert a.key == b.key != Edge("n", "x", "y", EdgeType.PRECEDES).key


@given(
    st.builds(
        AuditEntry,
        namespace=st.text(min_size=1),
        memory_id=text,
        op=st.sampled_from(["create", "merge", "supersede", "observe"]),
        at=finite,
        detail=st.dictionaries(st.text(max_size=5), text | st.integers()),
        id=st.text(min_size=1, max_size=10),
    )
)
def test_audit_entry_round_trips(entry: AuditEntry) -> None:
    """Audit entries survive their dict form."""
    assert entry == AuditEntry.from_dict(entry.to_dict())


def test_replace_copies_every_field_and_applies_changes() -> None:
    """A copy equals its record field by field, shares no list, and re-checks enums."""
    import dataclasses

    import pytest

    from hindsight_lg.model import MemoryRecord, Status

    r = MemoryRecord(
        namespace="u", content="tea", entities=["Anna"], meta={"k": 1}, salience=0.7
    )
    c = r.replace()
    assert all(getattr(c, f.name) == getattr(r, f.name) for f in dataclasses.fields(r))
    assert c.entities is not r.entities and c.meta is not r.meta
    changed = r.replace(status="cold", content="coffee")
    assert changed.status is Status.COLD and changed.content == "coffee"
    assert r.status is Status.ACTIVE and r.content == "tea"
    with pytest.raises(TypeError, match="bogus"):
        r.replace(bogus=1)
