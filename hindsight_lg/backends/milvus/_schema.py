"""The Milvus backend's collections: their schemas, indexes and tenancy.

``setup()`` (:mod:`._setup`) creates what is missing through these: the
memories collection with its dense and (where the server has it) BM25 index,
and the three stub-vector collections for edges, the audit trail and meta
rows. On a server, ``namespace`` is the partition key where the server routes
upserted rows right (one throwaway collection tells).
"""

from __future__ import annotations

import uuid
from typing import Any

from hindsight_lg import telemetry
from hindsight_lg.backends.milvus._core import STUB_VECTOR, MilvusCore
from hindsight_lg.backends.milvus._lite_repair import remove_torn_creation
from hindsight_lg.errors import StoreError


class SchemaOps(MilvusCore):
    """Create the collections, each with its schema and index."""

    def _has(self, name: str) -> bool:
        return bool(
            self._call("listing collections", self._client.has_collection, name)
        )

    def _create_memories(self, dim: int) -> None:
        from pymilvus import DataType, Function, FunctionType

        schema = self._memories_schema(dim)
        schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(
            Function(
                name="lexical_bm25",
                function_type=FunctionType.BM25,
                input_field_names=["lexical"],
                output_field_names=["sparse"],
            )
        )
        index = self._client.prepare_index_params()
        index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
        index.add_index(
            "sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25"
        )
        try:
            self._create(self.memories, schema, index)
        except StoreError:
            # Servers before 2.5 have no sparse vectors or BM25: fall back to a
            # dense-only schema and the client-side lexical path. Milvus 2.3
            # creates the collection before refusing the sparse index: drop
            # that half-made collection first.
            if self._has(self.memories):
                self._call("dropping", self._client.drop_collection, self.memories)
            index = self._client.prepare_index_params()
            index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
            self._create(
                self.memories, self._memories_schema(dim, analyzer=False), index
            )

    def _memories_schema(self, dim: int, analyzer: bool = True) -> Any:
        from pymilvus import DataType

        s = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
        s.add_field("id", DataType.VARCHAR, max_length=64)
        s.add_field("namespace", DataType.VARCHAR, max_length=512, **self._tenancy())
        for name in ("agent_id", "thread_id"):
            s.add_field(name, DataType.VARCHAR, max_length=512)
        for name in ("scope", "tier", "kind", "status"):
            s.add_field(name, DataType.VARCHAR, max_length=32)
        for name in ("event_time", "created_at"):
            s.add_field(name, DataType.DOUBLE)
        for name in ("importance", "strength"):
            s.add_field(name, DataType.FLOAT)
        extra = {"enable_analyzer": True} if analyzer else {}
        s.add_field("lexical", DataType.VARCHAR, max_length=65535, **extra)
        s.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        s.add_field("doc", DataType.JSON)
        return s

    def _stub_schema(self, fields: list[tuple[str, int]]) -> Any:
        from pymilvus import DataType

        s = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
        for name, length in fields:
            extra = self._tenancy() if name == "namespace" else {}
            s.add_field(name, DataType.VARCHAR, max_length=length, **extra)
        s.add_field("at", DataType.DOUBLE)
        s.add_field("doc", DataType.JSON)
        s.add_field("stub", DataType.FLOAT_VECTOR, dim=2)
        return s

    def _edges_schema(self) -> Any:
        return self._stub_schema(
            [("namespace", 512), ("src", 64), ("dst", 64), ("type", 32)]
        )

    def _audit_schema(self) -> Any:
        return self._stub_schema([("namespace", 512), ("memory_id", 64), ("op", 32)])

    def _meta_schema(self) -> Any:
        return self._stub_schema([("namespace", 512)])

    def _create_stub(self, name: str, schema: Any) -> None:
        index = self._client.prepare_index_params()
        index.add_index("stub", index_type="FLAT", metric_type="L2")
        self._create(name, schema, index)

    def _tenancy(self) -> dict[str, Any]:
        """Field options that make ``namespace`` the partition key, on a server.

        Milvus hashes a partition key into a fixed set of partitions and
        prunes a ``namespace == ...`` filter to the one partition that holds
        the tenant, so a search or query touches 1/``partitions`` of the
        collection instead of filtering every row: the mechanism Milvus gives
        for thousands of tenants in one collection. Milvus Lite keeps the
        plain field (one process, and the read cache serves each tenant).
        """
        return {"is_partition_key": True} if self._partitions else {}

    @property
    def _partitions(self) -> int:
        return 0 if self.is_lite else self.tenant_partitions

    def _choose_tenancy(self) -> None:
        """Before creating a store's collections, check the server's partition keys.

        Milvus 2.3.5 routes an *upserted* row to another partition than the
        one a ``namespace == ...`` filter reads (an inserted row lands right),
        so every record written by upsert would vanish from its tenant's
        reads. One throwaway collection tells: upsert rows, read one tenant
        back. Where it fails, the store keeps the plain field (a warning says
        why); a store whose collections exist keeps the schema it has.
        """
        if not self._partitions:
            return
        if not self._upsert_keeps_partitions():
            telemetry.get_logger().warning(
                "milvus_partition_key_unusable",
                uri=self.uri,
                reason="this server routes upserted rows to the wrong partition; "
                "tenants are separated by a namespace filter instead",
            )
            self.tenant_partitions = 0

    def _upsert_keeps_partitions(self) -> bool:
        from pymilvus import DataType

        # Unique per call: replicas opening a fresh store at once each probe.
        name = f"{self.prefix}_probe_{uuid.uuid4().hex[:12]}"
        s = self._client.create_schema(auto_id=False, enable_dynamic_field=False)
        s.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
        s.add_field("namespace", DataType.VARCHAR, max_length=512, **self._tenancy())
        s.add_field("stub", DataType.FLOAT_VECTOR, dim=2)
        index = self._client.prepare_index_params()
        index.add_index("stub", index_type="FLAT", metric_type="L2")
        self._create(name, s, index)
        try:
            rows = [
                {"pk": f"p{i}", "namespace": f"t{i % 4}", "stub": STUB_VECTOR}
                for i in range(16)
            ]
            self._call("probing partitions", self._client.upsert, name, rows)
            got = self._call(
                "probing partitions",
                self._client.query,
                name,
                filter='namespace == "t1"',
                output_fields=["pk"],
            )
            want = {f"p{i}" for i in range(1, 16, 4)}
            return {str(r["pk"]) for r in got} == want
        finally:
            self._call("dropping", self._client.drop_collection, name)

    def _create(self, name: str, schema: Any, index: Any) -> None:
        if self.is_lite:
            # A first open killed mid-creation leaves a directory every later
            # creation refuses: the store would never open again.
            remove_torn_creation(self.uri, name)
        extra = {"num_partitions": self._partitions} if self._partitions else {}
        self._call(
            f"creating collection {name}",
            self._client.create_collection,
            name,
            schema=schema,
            index_params=index,
            consistency_level="Strong",
            **extra,
        )

    def partitioned(self) -> bool:
        """Whether the memories collection has ``namespace`` as its partition key.

        False for collections a version without tenancy partitions created
        (and on Milvus Lite): ``hindsight-lg reembed --migrate`` copies such a
        store into partitioned collections, vectors unchanged.
        """
        return partition_key(self._fields_of_memories())

    def _fields_of_memories(self) -> list[dict[str, Any]]:
        info = self._call(
            "describing collection", self._client.describe_collection, self.memories
        )
        return list(info.get("fields", []))


def partition_key(fields: list[dict[str, Any]]) -> bool:
    """Whether a collection described by ``fields`` partitions by ``namespace``."""
    return any(
        f.get("name") == "namespace" and f.get("is_partition_key") for f in fields
    )
