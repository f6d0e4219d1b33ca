"""Adapters read through the engine: each read is a store span, namespaces checked."""

from __future__ import annotations

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends import Where
from hindsight_lg.model import AuditEntry
from hindsight_lg.panel._views import Filters, memory_view, namespace_view
from hindsight_lg.store import HindsightStore
from hindsight_lg.testing import capture_spans


def _store_calls(spans: list) -> list[str]:  # type: ignore[type-arg]
    return [s.name for s in spans if s.name.startswith("hindsight.store.")]


def test_each_engine_read_is_one_store_span(memory: HindsightMemory) -> None:
    """get_many, query and count each put one span around their store call."""
    first = memory.capture("I prefer green tea over coffee", namespace="u1")[0]
    with capture_spans() as spans:
        found = memory.get_many("u1", [first.id, "missing"])
        listed = memory.query("u1", Where(kinds=(first.kind.value,)), limit=5)
        counted = memory.count("u1")
    assert ([first.id], [first.id], 1) == (
        [r.id for r in found],
        [r.id for r in listed],
        counted,
    )
    assert [
        "hindsight.store.get",
        "hindsight.store.query",
        "hindsight.store.count",
    ] == _store_calls(spans)
    namespaces = [dict(s.attributes or {}).get("hindsight.namespace") for s in spans]
    assert ["u1", "u1", "u1"] == namespaces


def test_reads_refuse_a_bad_namespace(memory: HindsightMemory) -> None:
    """A namespace the store would not hold is a caller mistake, said at once."""
    for read in (
        lambda: memory.query("", Where()),
        lambda: memory.count(""),
        lambda: memory.get_many("", ["x"]),
    ):
        with pytest.raises(ValueError):
            read()


def test_append_audit_adds_to_the_trail(memory: HindsightMemory) -> None:
    """An adapter's audit note lands in the namespace's trail, through a span."""
    entry = AuditEntry("u1", "m1", "forget", memory.clock(), {"by": "panel"})
    with capture_spans() as spans:
        memory.append_audit("u1", [entry])
    assert ["hindsight.store.append_audit"] == _store_calls(spans)
    assert [("m1", "forget", {"by": "panel"})] == [
        (e.memory_id, e.op, e.detail) for e in memory.audit("u1", "m1")
    ]


def test_the_store_and_the_panel_read_through_the_engine(
    memory: HindsightMemory,
) -> None:
    """A LangGraph store get and a panel page show up as the engine's store spans."""
    store = HindsightStore(memory)
    store.put(("memories", "u2"), "tea", {"content": "Likes green tea"})
    with capture_spans() as spans:
        assert store.get(("memories", "u2"), "tea") is not None
    assert "hindsight.store.get" in _store_calls(spans)
    record = memory.capture("I prefer green tea over coffee", namespace="u1")[0]
    with capture_spans() as spans:
        namespace_view(memory, "u1", Filters())
        memory_view(memory, "u1", record.id)
    calls = _store_calls(spans)
    assert {"hindsight.store.count", "hindsight.store.query"} <= set(calls)
    assert {"hindsight.store.get", "hindsight.store.edges"} <= set(calls)
