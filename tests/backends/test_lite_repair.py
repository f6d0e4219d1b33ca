"""Opening a damaged Milvus Lite file: torn index sidecars are rebuilt; lost data is reported."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import structlog
from milvus_lite.server_manager import server_manager_instance

from hindsight_lg.backends.base import Where
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.milvus import _setup as milvus_setup
from hindsight_lg.backends.milvus._integrity import LEDGER
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

    monkeypatch.setattr(milvus_setup, "remove_index_sidecars", remove_then_tear_again)
    expected = re.escape(str(Path(uri) / "collections" / "hindsight_memories"))
    with pytest.raises(StoreUnavailable, match=expected):
        _close(_open(uri))
    server_manager_instance.release_server(uri)


# -- a store that lost its data says so --------------------------------------


def _memories_dir(uri: str) -> Path:
    return Path(uri) / "collections" / "hindsight_memories"


@pytest.fixture
def stored(tmp_path: Path) -> str:
    """A closed store of CONTENTS written in two flushes (two data files)."""
    uri = str(tmp_path / "m.db")
    backend = _open(uri)
    records = _records()
    backend.upsert(NAMESPACE, records[:6])
    backend.flush()
    backend.upsert(NAMESPACE, records[6:])
    _close(backend)
    return uri


def _count(uri: str) -> int:
    backend = _open(uri)
    try:
        return backend.count(NAMESPACE, Where())
    finally:
        _close(backend)


def test_a_garbage_manifest_refuses_to_open_and_deletes_nothing(stored: str) -> None:
    """A manifest.json that does not parse raises StoreUnavailable before Milvus Lite reads it."""
    manifest = _memories_dir(stored) / "manifest.json"
    good = manifest.read_bytes()
    files = sorted(_memories_dir(stored).rglob("*.parquet"))
    manifest.write_bytes(b"\x00garbage{")
    with pytest.raises(StoreUnavailable, match="hindsight_memories: manifest.json"):
        _open(stored)
    assert files == sorted(_memories_dir(stored).rglob("*.parquet"))
    manifest.write_bytes(good)  # the data was all kept: the store is whole again
    assert len(CONTENTS) == _count(stored)


def test_cli_list_on_a_garbage_manifest_fails_loudly(
    stored: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`hindsight-lg list` reports the damage and exits non-zero, not '(0 memories)'."""
    from hindsight_lg.cli import main

    (_memories_dir(stored) / "manifest.json").write_text("garbage")
    argv = ["list", "--uri", stored, "--embedder", "hashing", "-n", NAMESPACE]
    assert 0 != main(argv)
    captured = capsys.readouterr()
    assert "damaged" in captured.err and "0 memories" not in captured.out


def test_a_missing_data_file_refuses_to_open(stored: str) -> None:
    """A data file the manifest lists but the disk lacks is damage, not a warning."""
    victim = sorted(_memories_dir(stored).rglob("*.parquet"))[-1]
    victim.unlink()
    with pytest.raises(StoreUnavailable, match="data files that are gone"):
        _open(stored)


def test_an_older_manifest_that_drops_rows_is_caught_by_the_ledger(
    stored: str,
) -> None:
    """A valid manifest missing the newest segment loses rows: the row ledger says so."""
    _drop_newest_segment(stored)
    expected = f"hindsight_memories holds 6 rows, {len(CONTENTS)} were stored"
    with pytest.raises(StoreUnavailable, match=expected):
        _open(stored)
    server_manager_instance.release_server(stored)
    with pytest.raises(StoreUnavailable, match="lost data"):  # and on every open
        _open(stored)
    server_manager_instance.release_server(stored)


def _drop_newest_segment(uri: str) -> None:
    manifest = _memories_dir(uri) / "manifest.json"
    doc = json.loads(manifest.read_text())
    files = doc["partitions"]["_default"]["data_files"]
    doc["partitions"]["_default"]["data_files"] = files[:1]
    manifest.write_text(json.dumps(doc))


def test_reembed_of_a_store_that_lost_rows_copies_nothing(stored: str) -> None:
    """Re-embedding loads without setup(): the ledger still stops the copy."""
    from hindsight_lg.memory.jobs.reembed import reembed

    _drop_newest_segment(stored)
    with pytest.raises(StoreUnavailable, match="lost data"):
        reembed(stored, to=HashingEmbedder(dim=128))
    server_manager_instance.release_server(stored)
    collections = {p.name for p in (Path(stored) / "collections").iterdir()}
    assert not any(name.startswith("hindsight_r2") for name in collections)


def test_a_removed_collection_is_caught_by_the_ledger(stored: str) -> None:
    """A collection deleted from disk is not silently recreated empty."""
    shutil.rmtree(_memories_dir(stored))
    with pytest.raises(StoreUnavailable, match="hindsight_memories holds 0 rows"):
        _open(stored)
    server_manager_instance.release_server(stored)


def test_deletes_and_drops_never_look_like_loss(stored: str) -> None:
    """Deleting through the backend, even without a clean close, reopens healthy."""
    backend = _open(stored)
    gone = backend.query(NAMESPACE, Where(), limit=5)
    assert 5 == backend.delete(NAMESPACE, [r.id for r in gone])
    backend.flush()
    server_manager_instance.release_server(stored)  # a crash: close() never runs
    assert len(CONTENTS) - 5 == _count(stored)
    backend = _open(stored)
    backend._call("dropping", backend._client.drop_collection, backend.memories)
    _close(backend)
    assert 0 == _count(stored)  # dropped on purpose: a fresh, empty collection


def test_a_damaged_ledger_is_reported_and_deleting_it_accepts_the_store(
    stored: str,
) -> None:
    """A row ledger that fails its checksum is damage; removing it is the way out."""
    ledger = Path(stored) / LEDGER
    doc = json.loads(ledger.read_text())
    doc["rows"]["hindsight_memories"] = 0  # an edit without the checksum
    ledger.write_text(json.dumps(doc))
    with pytest.raises(StoreUnavailable, match="delete that file"):
        _open(stored)
    server_manager_instance.release_server(stored)
    ledger.unlink()
    assert len(CONTENTS) == _count(stored)


# -- a first open killed mid-creation -----------------------------------------


def _audit_dir(uri: str) -> Path:
    return Path(uri) / "collections" / "hindsight_audit"


@pytest.mark.parametrize("left", [[], ["schema.json.tmp"]], ids=["empty", "tmp"])
def test_a_creation_killed_before_its_schema_opens(
    tmp_path: Path, left: list[str]
) -> None:
    """A collection directory with no schema yet (a kill mid-creation) is made again."""
    uri = str(tmp_path / "m.db")
    _close(_open(uri))
    shutil.rmtree(_audit_dir(uri))
    _audit_dir(uri).mkdir()
    for name in left:
        (_audit_dir(uri) / name).write_text('{"collection_name": "hindsight_au')
    with structlog.testing.capture_logs() as logs:
        backend = _open(uri)
    try:
        assert (_audit_dir(uri) / "schema.json").is_file()
        assert [
            e["held"] for e in logs if e["event"] == "lite_torn_collection_removed"
        ] == [left]
    finally:
        _close(backend)


def test_a_collection_that_lost_only_its_schema_is_not_replaced(stored: str) -> None:
    """Data files without a schema are a damaged store: refused, nothing deleted."""
    schema = _memories_dir(stored) / "schema.json"
    files = sorted(p for p in _memories_dir(stored).rglob("*") if p.is_file())
    schema.unlink()
    with pytest.raises(StoreUnavailable, match="no schema.json.*nothing was deleted"):
        _open(stored)
    server_manager_instance.release_server(stored)
    assert [p for p in files if p != schema] == sorted(
        p for p in _memories_dir(stored).rglob("*") if p.is_file()
    )
