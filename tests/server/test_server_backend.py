"""The backend contract and the acceptance examples on a real Milvus 2.3 server."""

from __future__ import annotations

import io
import json

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.memory.jobs.portability import (
    export_namespace,
    import_namespace,
    read_export,
)
from hindsight_lg.model import AuditEntry, MemoryRecord
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
from hindsight_lg.testing.backend_contract import BackendContract
from tests.memory.test_acceptance import *  # noqa: F403


class TestServerBackend(BackendContract):
    """The shipped contract on the server (``backend`` from ``conftest.py``)."""


# Lite- and in-memory-specific checks stay in their own modules.
del test_acceptance_examples_with_minilm_on_milvus_lite  # noqa: F821
del test_minilm_recall_finds_a_paraphrase  # noqa: F821


def test_server_has_no_bm25_so_lexical_search_falls_back(
    server_backend: MilvusBackend,
) -> None:
    """Milvus 2.3 lacks sparse vectors and BM25: the backend reports it."""
    assert (False, "milvus") == (
        server_backend.capabilities.bm25,
        server_backend.capabilities.name,
    )


def test_collections_read_with_strong_consistency(
    server_backend: MilvusBackend,
) -> None:
    """Every collection is created with Strong consistency (read your own writes)."""
    client = server_backend._client
    levels = {
        name: client.describe_collection(name).get("consistency_level")
        for name in client.list_collections()
        if name.startswith(server_backend.prefix + "_")
    }
    assert 4 == len(levels)
    assert {0} == set(levels.values())  # 0 is ConsistencyLevel.Strong


def _largest_importable(lines: list[str]) -> list[str]:
    """The export with its record's content grown to the most import accepts."""
    header, record_line, *rest = lines
    item = json.loads(record_line)
    low, high = 0, 20000  # emoji: 4 bytes each, so 20,000 is over the limit
    while low < high:
        mid = (low + high + 1) // 2
        item["data"]["content"] = "\U0001f600" * mid
        try:
            read_export([header, json.dumps(item), *rest])
            low = mid
        except ValueError:
            high = mid - 1
    item["data"]["content"] = "\U0001f600" * low
    return [header, json.dumps(item), *rest]


def test_what_import_accepts_the_server_stores(
    server_backend: MilvusBackend, namespace: str
) -> None:
    """Ids, names, op and document at import's limits are written by a real server."""
    source = HindsightMemory(InMemoryBackend(), HashingEmbedder(), cache=False)
    record = MemoryRecord(
        namespace="src",
        content="x",
        id="\u00e9" * 32,  # 64 bytes
        agent_id="\u00e9" * 256,  # 512 bytes
        thread_id="t" * 512,
    )
    source.put_record(record)
    source.backend.append_audit("src", [AuditEntry("src", record.id, "o" * 32)])
    buffer = io.StringIO()
    export_namespace(source, "src", buffer)
    lines = _largest_importable(buffer.getvalue().splitlines())
    target = namespace + "\U0001f600" * ((512 - len(namespace)) // 4)
    with HindsightMemory(server_backend, HashingEmbedder(), cache=False) as memory:
        stats = import_namespace(memory, lines, namespace=target)
        stored = memory.backend.get(target, [record.id])
        ops = [a.op for a in memory.backend.audit(target)]
    assert 1 == stats.records == len(stored)
    largest = json.loads(lines[1])["data"]["content"]  # within 4 bytes of the limit
    assert largest == stored[0].content
    assert "o" * 32 in ops
