"""Raw filtered search on a server: tenants as a plain field or as the partition key.

A collection of the same size, tenants, dimension and index as the store's
memories is built with ``namespace`` as its partition key (rows inserted:
every server routes inserts right), and one filtered dense search per query
is timed on it and on the store's own collection, alternating, in one run.
Vectors are random unit vectors: search cost depends on their number, their
dimension and the filter, not on what they say.

The pair is timed at ``Session`` consistency, as the store reads, so that it
measures the search and not the wait for the server's time tick; one more
search per query on the store's collection at ``Strong`` consistency shows
that wait.
"""

from __future__ import annotations

import random
import time
from typing import Any

import numpy as np

from hindsight_lg.bench.scale import percentiles

_BATCH = 5000


def _dim(client: Any, name: str) -> int:
    for f in client.describe_collection(name)["fields"]:
        if f["name"] == "dense":
            return int(f["params"]["dim"])
    raise ValueError(f"{name} has no dense field")


def _build(client: Any, name: str, size: int, namespaces: int, dim: int) -> None:
    from pymilvus import DataType

    schema = client.create_schema(auto_id=False, enable_dynamic_field=False)
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=64)
    schema.add_field(
        "namespace", DataType.VARCHAR, max_length=512, is_partition_key=True
    )
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    index = client.prepare_index_params()
    index.add_index("dense", index_type="AUTOINDEX", metric_type="COSINE")
    client.create_collection(
        name,
        schema=schema,
        index_params=index,
        num_partitions=64,
        consistency_level="Strong",
    )
    rng = np.random.default_rng(0)
    for start in range(0, size, _BATCH):
        n = min(_BATCH, size - start)
        vectors = rng.standard_normal((n, dim)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows = [
            {
                "pk": f"r{start + i}",
                "namespace": f"ns{(start + i) % namespaces}",
                "dense": vectors[i].tolist(),
            }
            for i in range(n)
        ]
        client.insert(name, rows)
    client.flush(name)
    client.load_collection(name)


def _search_ms(
    client: Any, name: str, vector: list[float], ns: str, level: str = "Session"
) -> float:
    start = time.perf_counter()
    client.search(
        name,
        data=[vector],
        anns_field="dense",
        limit=20,
        filter=f'namespace == "{ns}"',
        output_fields=["pk"],
        consistency_level=level,
    )
    return (time.perf_counter() - start) * 1000


Pair = tuple[float, float]


def compare_tenancy(
    uri: str, *, source: str, namespaces: int, queries: int
) -> tuple[Pair, Pair, Pair]:
    """p50/p95 ms of a filtered search: ``source``, its partitioned twin, Strong.

    The first two at ``Session`` consistency, the third on ``source`` at
    ``Strong``.
    """
    from pymilvus import MilvusClient

    client = MilvusClient(uri=uri)
    twin = f"{source}_pk"
    try:
        size = int(
            client.query(source, filter="", output_fields=["count(*)"])[0]["count(*)"]
        )
        dim = _dim(client, source)
        if client.has_collection(twin):
            client.drop_collection(twin)
        _build(client, twin, size, namespaces, dim)
        rng = random.Random(11)
        plain, keyed, strong = [], [], []
        for _ in range(queries):
            v = np.random.default_rng(rng.randrange(10**6)).standard_normal(dim)
            vector = (v / np.linalg.norm(v)).astype(np.float32).tolist()
            ns = f"ns{rng.randrange(namespaces)}"
            plain.append(_search_ms(client, source, vector, ns))
            keyed.append(_search_ms(client, twin, vector, ns))
            strong.append(_search_ms(client, source, vector, ns, "Strong"))
        return percentiles(plain), percentiles(keyed), percentiles(strong)
    finally:
        if client.has_collection(twin):
            client.drop_collection(twin)
        client.close()
