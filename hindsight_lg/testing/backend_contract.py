"""The ``MemoryBackend`` contract, for any backend: subclass and give a fixture.

Every backend that ships passes it; a third-party backend runs the same
assertions by subclassing :class:`BackendContract` in its own tests, the way
LangGraph's checkpoint conformance suite is run against a saver::

    import pytest
    from hindsight_lg.testing.backend_contract import BackendContract

    class TestMyBackend(BackendContract):
        @pytest.fixture
        def backend(self):
            backend = MyBackend(...)
            embedder = HashingEmbedder()
            backend.setup(dim=embedder.dim, model_id=embedder.model_id)
            yield backend
            backend.close()

The backend is set up for :class:`~hindsight_lg.embeddings.HashingEmbedder`
(384 dimensions). Each test uses a fresh namespace, so one backend can serve
the whole class. Requires pytest.

The tests are grouped by what they cover: records, filters and namespaces
here, search in :mod:`._contract_search`, edges and the audit trail in
:mod:`._contract_links`; the records and helpers they share, in
:mod:`._contract_data`.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest

from hindsight_lg._text import terms
from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    Scope,
    Status,
    Tier,
)
from hindsight_lg.testing._contract_data import (
    EMBEDDER,
    T0,
    contents,
    edge,
    names,
    put,
    rec,
)
from hindsight_lg.testing._contract_links import LinksContract
from hindsight_lg.testing._contract_search import SearchContract


class BackendContract(SearchContract, LinksContract):
    """The contract's tests; subclasses provide the ``backend`` fixture."""

    @pytest.fixture
    def namespace(self) -> str:
        """A namespace no other test uses."""
        return f"contract-{uuid.uuid4().hex[:12]}"

    def test_backends_satisfy_the_protocol(self, backend: MemoryBackend) -> None:
        """Every backend is a runtime-checkable MemoryBackend."""
        assert isinstance(backend, MemoryBackend)

    def test_upsert_then_get_round_trips_every_field(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """A stored record comes back equal, field by field."""
        r = rec(
            namespace,
            "Maya prefers tea",
            kind=Kind.PREFERENCE,
            agent_id="a1",
            entities=["Maya"],
            participants=["Maya"],
            source_ids=["s1:0"],
            meta={"details": ["x"]},
            event_time=T0,
            created_at=T0,
        )
        put(backend, namespace, r)
        [got] = backend.get(namespace, [r.id])
        assert r.to_dict(vectors=False) == got.to_dict(vectors=False)

    def test_get_with_vectors_returns_the_dense_vector(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """``vectors=True`` returns the stored dense vector."""
        r = rec(namespace, "vector please")
        put(backend, namespace, r)
        [got] = backend.get(namespace, [r.id], vectors=True)
        np.testing.assert_allclose(got.dense, r.dense, atol=1e-6)

    def test_get_unknown_id_returns_nothing(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Asking for an id that does not exist is not an error."""
        assert [] == backend.get(namespace, ["nope"])

    def test_upsert_replaces_by_id(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Upserting the same id twice keeps one record, the latest."""
        r = rec(namespace, "first version")
        put(backend, namespace, r)
        put(backend, namespace, r.replace(content="second version", version=2))
        assert ["second version"] == contents(backend.get(namespace, [r.id]))
        assert 1 == backend.count(namespace, Where())

    def test_upsert_rejects_a_record_of_another_namespace(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """A record cannot be written under a namespace it does not belong to."""
        with pytest.raises(ValueError, match="belongs to"):
            backend.upsert(namespace, [rec(namespace + "-other", "x")])

    @pytest.mark.parametrize(
        "bad", ["", "   ", "a\x00b", "x" * 513, "\U0001f600" * 129, "\u00e9" * 257]
    )
    def test_invalid_namespace_is_rejected(
        self, backend: MemoryBackend, bad: str
    ) -> None:
        """Empty, blank, control-character and over-512-byte namespaces are refused."""
        with pytest.raises(ValueError):
            backend.query(bad, Where())

    @pytest.mark.parametrize("filler", ["x", "\U0001f600"], ids=["ascii", "emoji"])
    def test_the_longest_valid_namespace_is_stored(
        self, backend: MemoryBackend, filler: str
    ) -> None:
        """A namespace of exactly 512 bytes of UTF-8 is written, edged and read back."""
        unique = uuid.uuid4().hex  # 32 bytes: a fresh tenant on a shared backend
        namespace = unique + filler * (480 // len(filler.encode()))
        assert 512 == len(namespace.encode())
        r = rec(namespace, "the longest tenant id")
        put(backend, namespace, r)
        backend.add_edges(
            namespace, [Edge(namespace, r.id, "entity:x", EdgeType.MENTIONS)]
        )
        backend.append_audit(namespace, [AuditEntry(namespace, r.id, "create")])
        backend.flush()
        try:
            assert [r.id] == [x.id for x in backend.query(namespace, Where())]
            assert 1 == len(backend.edges(namespace, [r.id]))
            assert ["create"] == [a.op for a in backend.audit(namespace)]
        finally:
            backend.delete_edges(namespace, [r.id])
            backend.purge_audit(namespace)
            backend.delete(namespace, [r.id])

    def test_query_returns_newest_event_first_within_limit(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Query orders by event time, newest first, and honours the limit."""
        put(
            backend,
            namespace,
            *(rec(namespace, f"event {i}", event_time=T0 + i) for i in (2, 0, 3, 1)),
        )
        assert ["event 3", "event 2", "event 1", "event 0"] == contents(
            backend.query(namespace, Where())
        )
        assert ["event 3", "event 2"] == contents(
            backend.query(namespace, Where(), limit=2)
        )

    @pytest.fixture
    def varied(self, backend: MemoryBackend, namespace: str) -> dict[str, MemoryRecord]:
        """Records differing in status, kind, tier, thread, time, strength and scope."""
        records = {
            "active": rec(namespace, "active fact", kind=Kind.FACT, event_time=T0),
            "superseded": rec(
                namespace,
                "old preference",
                kind=Kind.PREFERENCE,
                status=Status.SUPERSEDED,
                event_time=T0 + 10,
            ),
            "cold": rec(
                namespace,
                "cold event",
                status=Status.COLD,
                strength=0.1,
                event_time=T0 + 20,
            ),
            "rule": rec(
                namespace,
                "always be brief",
                kind=Kind.RULE,
                tier=Tier.PROCEDURAL,
                thread_id="t9",
                event_time=T0 + 30,
            ),
            "private_a": rec(
                namespace, "a's secret", agent_id="a", event_time=T0 + 40, strength=0.5
            ),
            "team_a": rec(
                namespace,
                "a's team note",
                agent_id="a",
                scope=Scope.TEAM,
                event_time=T0 + 50,
            ),
        }
        put(backend, namespace, *records.values())
        return records

    @pytest.mark.parametrize(
        ("where", "expected"),
        [
            (Where(), {"active", "rule", "private_a", "team_a"}),
            (
                Where(statuses=()),
                {"active", "superseded", "cold", "rule", "private_a", "team_a"},
            ),
            (Where(statuses=("superseded", "cold")), {"superseded", "cold"}),
            (Where(kinds=("rule", "fact")), {"active", "rule"}),
            (Where(tiers=("procedural",)), {"rule"}),
            (Where(thread_id="t9"), {"rule"}),
            (Where(since=T0 + 30), {"rule", "private_a", "team_a"}),
            (Where(since=T0, until=T0 + 30), {"active"}),
            (
                Where(statuses=(), min_strength=0.2),
                {"active", "superseded", "rule", "private_a", "team_a"},
            ),
            (Where(reader="b"), {"active", "rule", "team_a"}),
            (Where(reader="a"), {"active", "rule", "private_a", "team_a"}),
        ],
        ids=[
            "default-active",
            "all-statuses",
            "statuses",
            "kinds",
            "tiers",
            "thread",
            "since",
            "half-open-window",
            "min-strength",
            "reader-other-agent",
            "reader-owner",
        ],
    )
    def test_where_filters(
        self,
        backend: MemoryBackend,
        namespace: str,
        varied: dict[str, MemoryRecord],
        where: Where,
        expected: set[str],
    ) -> None:
        """Each Where condition selects the same records on every backend."""
        got = backend.query(namespace, where)
        assert expected == names(varied, got)
        assert len(expected) == backend.count(namespace, where)

    def test_where_filters_match_the_reference_semantics(
        self, backend: MemoryBackend, namespace: str, varied: dict[str, MemoryRecord]
    ) -> None:
        """A backend's filtering agrees with ``Where.matches`` record by record."""
        where = Where(statuses=(), kinds=("event", "fact"), reader="b", since=T0)
        expected = {n for n, r in varied.items() if where.matches(r)}
        assert expected == names(varied, backend.query(namespace, where))

    def test_delete_removes_records_and_counts_existing(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Delete returns how many of the ids existed, and they are gone."""
        a, b = rec(namespace, "a"), rec(namespace, "b")
        put(backend, namespace, a, b)
        assert 1 == backend.delete(namespace, [a.id, "missing"])
        backend.flush()
        assert [] == backend.get(namespace, [a.id])
        assert [b.id] == [r.id for r in backend.query(namespace, Where())]

    def test_namespaces_and_count(self, backend: MemoryBackend, namespace: str) -> None:
        """A namespace with records is listed and counted; an empty one is not."""
        put(backend, namespace, rec(namespace, "x"), rec(namespace, "y"))
        assert namespace in backend.namespaces()
        assert namespace + "-empty" not in backend.namespaces()
        assert 2 == backend.count(namespace, Where())
        assert 0 == backend.count(namespace + "-empty", Where())

    def test_namespaces_are_isolated(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Nothing of one namespace is visible from another, even with the same ids."""
        other = namespace + "-b"
        mine = rec(namespace, "Maya's secret plan")
        theirs = mine.replace(namespace=other, content="someone else's plan")
        put(backend, namespace, mine)
        put(backend, other, theirs)
        backend.add_edges(namespace, [edge(namespace, mine.id, "x", EdgeType.CAUSES)])
        backend.append_audit(namespace, [AuditEntry(namespace, mine.id, "create", T0)])
        backend.flush()
        assert ["someone else's plan"] == contents(backend.get(other, [mine.id]))
        assert ["Maya's secret plan"] == contents(backend.get(namespace, [mine.id]))
        q = mine.dense
        assert ["someone else's plan"] == [
            h.record.content for h in backend.search_dense(other, q, Where(), limit=10)
        ]
        assert [] == backend.search_lexical(other, terms("secret"), Where(), limit=10)
        assert [] == backend.edges(other, [mine.id])
        assert [] == backend.audit(other)
        assert 1 == backend.delete(other, [mine.id])
        backend.flush()
        assert [mine.id] == [r.id for r in backend.get(namespace, [mine.id])]

    def test_quotes_and_backslashes_survive_filters(
        self, backend: MemoryBackend
    ) -> None:
        """Namespaces and thread ids with quotes and backslashes are escaped, not injected."""
        namespace = 'o"brien\\ or 1==1'
        r = rec(namespace, 'she said "hi"', thread_id='t"1\\')
        put(backend, namespace, r)
        assert [r.id] == [
            x.id for x in backend.query(namespace, Where(thread_id='t"1\\'))
        ]
        assert [] == backend.query("o", Where(statuses=()))

    def test_reading_an_unknown_namespace_is_empty(
        self, backend: MemoryBackend
    ) -> None:
        """An unknown namespace gives empty results everywhere, not an error."""
        ns = "never-written-namespace"
        vector = rec(ns, "x").dense
        assert [] == backend.query(ns, Where())
        assert [] == backend.search_dense(ns, vector, Where(), limit=5)
        assert [] == backend.search_lexical(ns, ["x"], Where(), limit=5)
        assert [] == backend.audit(ns)
        assert 0 == backend.count(ns, Where())


__all__ = [
    "EMBEDDER",
    "T0",
    "BackendContract",
    "contents",
    "edge",
    "names",
    "put",
    "rec",
]
