"""Opening a Milvus Lite file whose index sidecar a crash left torn."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import structlog
from milvus_lite.server_manager import server_manager_instance

from hindsight_lg.backends.base import Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus import backend as milvus
from hindsight_lg.backends.milvus._lite_repair import remove_index_sidecars
from hindsight_lg.errors import StoreUnavailable
from hindsight_lg.model import MemoryRecord
from hindsight_lg.testing import HashingEmbedder

EMBEDDER = HashingEmbedder()
NAMESPACE = "repair"
CONTENTS = [f"Maya keeps note number {i} about the garden" for i in range(12)]


def _open(uri: str) -> MilvusBackend:
    backend = MilvusBackend(uri)
    backend.setup(dim=EMBEDDER.dim, model_id=EMBEDDER.model_id)
    return backend


def _close(backend: MilvusBackend) -> None:
    """Close as a process exit would: stop this process's Lite server too.

    Closing the client alone keeps the in-process server, with its collections
    loaded, so a reopen would never read the files again.
    """
    backend.close()
    server_manager_instance.release_server(backend.uri)


def _records() -> list[MemoryRecord]:
    vectors = EMBEDDER.embed(CONTENTS)
    return [
        MemoryRecord(namespace=NAMESPACE, content=c, dense=[float(x) for x in v])
        for c, v in zip(CONTENTS, vectors, strict=True)
    ]


def _dense_sidecar(uri: str) -> Path:
    """The memories' one dense index sidecar, written by a load."""
    indexes = Path(uri) / "collections/hindsight_memories/partitions/_default/indexes"
    (sidecar,) = indexes.glob("*.dense.*.idx")
    return sidecar


@pytest.fixture
def torn_db(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[str, Path]:
    """A store of CONTENTS whose dense index sidecar is cut to a prefix."""
    uri = str(tmp_path / "m.db")
    backend = _open(uri)
    backend.upsert(NAMESPACE, _records())
    _close(backend)
    _close(_open(uri))  # a load writes any sidecar the first session did not
    sidecar = _dense_sidecar(uri)
    data = sidecar.read_bytes()
    sidecar.write_bytes(data[: int(len(data) * request.param)])
    return uri, sidecar


@pytest.mark.parametrize("torn_db", [0.0, 0.5], indirect=True, ids=["empty", "half"])
def test_torn_index_sidecar_is_rebuilt_on_open(torn_db: tuple[str, Path]) -> None:
    """A torn index file is removed and rebuilt on open; every record survives."""
    uri, sidecar = torn_db
    with structlog.testing.capture_logs() as logs:
        backend = _open(uri)
    try:
        stored = backend.query(NAMESPACE, Where(), limit=100)
        probe = [float(x) for x in EMBEDDER.embed(CONTENTS[:1])[0]]
        hits = backend.search_dense(NAMESPACE, probe, Where(), limit=3)
    finally:
        _close(backend)
    removals = [e for e in logs if e["event"] == "lite_index_sidecars_removed"]
    assert sorted(CONTENTS) == sorted(r.content for r in stored)
    assert CONTENTS[0] == hits[0].record.content
    assert ["warning"] == [e["log_level"] for e in removals]
    assert str(sidecar) in removals[0]["removed"]
    assert all(p.endswith((".idx", ".sidx")) for p in removals[0]["removed"])
    assert sidecar.stat().st_size > 0  # written anew by the retried load


@pytest.mark.parametrize("torn_db", [0.5], indirect=True, ids=["half"])
def test_still_unreadable_after_repair_raises_naming_the_collection(
    torn_db: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load that fails again after the repair raises StoreUnavailable with the path."""
    uri, sidecar = torn_db
    torn = sidecar.read_bytes()

    def remove_then_tear_again(*args: Any) -> list[Path]:
        removed = remove_index_sidecars(*args)
        sidecar.write_bytes(torn)  # as if the disk tore it again
        return removed

    monkeypatch.setattr(milvus, "remove_index_sidecars", remove_then_tear_again)
    expected = re.escape(str(Path(uri) / "collections" / "hindsight_memories"))
    with pytest.raises(StoreUnavailable, match=expected):
        _close(_open(uri))
    server_manager_instance.release_server(uri)
