"""The backend contract's tests of edges and the audit trail.

Part of :class:`~hindsight_lg.testing.backend_contract.BackendContract`.
"""

from __future__ import annotations

from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.model import AuditEntry, EdgeType
from hindsight_lg.testing._contract_data import T0, edge


class LinksContract:
    """Edges between memories and the audit trail: written, read, deleted."""

    def test_edges_of_a_frontier_touch_either_end(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Edges with a frontier id at either end come back; others do not."""
        edges = [
            edge(namespace, "a", "b", EdgeType.CAUSES),
            edge(namespace, "c", "a", EdgeType.PRECEDES),
            edge(namespace, "d", "e", EdgeType.SEMANTIC),
            edge(namespace, "b", "f", EdgeType.SUPERSEDES),
        ]
        backend.add_edges(namespace, edges)
        backend.flush()
        got = backend.edges(namespace, ["a", "f"])
        assert {edges[0].key, edges[1].key, edges[3].key} == {e.key for e in got}
        typed = backend.edges(namespace, ["a", "f"], types=[EdgeType.CAUSES])
        assert [edges[0]] == typed
        assert [] == backend.edges(namespace, [])

    def test_add_edges_replaces_the_same_src_type_dst(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """One edge per (src, type, dst): re-adding updates its weight."""
        backend.add_edges(namespace, [edge(namespace, "a", "b", EdgeType.CAUSES, 0.3)])
        backend.add_edges(namespace, [edge(namespace, "a", "b", EdgeType.CAUSES, 0.9)])
        backend.flush()
        assert [0.9] == [e.weight for e in backend.edges(namespace, ["a"])]

    def test_delete_edges_removes_edges_touching_ids(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """delete_edges removes every edge with either end in ids and counts them."""
        backend.add_edges(
            namespace,
            [
                edge(namespace, "a", "b", EdgeType.CAUSES),
                edge(namespace, "c", "a", EdgeType.PRECEDES),
                edge(namespace, "c", "d", EdgeType.PRECEDES),
            ],
        )
        backend.flush()
        assert 2 == backend.delete_edges(namespace, ["a"])
        backend.flush()
        assert [("c", "d")] == [
            (e.src, e.dst) for e in backend.edges(namespace, ["a", "c"])
        ]

    def test_audit_appends_reads_oldest_first_and_purges(
        self, backend: MemoryBackend, namespace: str
    ) -> None:
        """Audit entries read back oldest first, per memory, and purge selectively."""
        entries = [
            AuditEntry(namespace, "m2", "merge", T0 + 5, {"content": "later"}),
            AuditEntry(namespace, "m1", "create", T0, {"content": "first"}),
            AuditEntry(namespace, "m2", "create", T0 + 1, {"content": "second"}),
        ]
        backend.append_audit(namespace, entries)
        backend.flush()
        assert ["first", "second", "later"] == [
            a.detail["content"] for a in backend.audit(namespace)
        ]
        assert ["create", "merge"] == [a.op for a in backend.audit(namespace, "m2")]
        assert 2 == backend.purge_audit(namespace, ["m2"])
        backend.flush()
        assert ["m1"] == [a.memory_id for a in backend.audit(namespace)]
        assert 1 == backend.purge_audit(namespace)
        backend.flush()
        assert [] == backend.audit(namespace)
