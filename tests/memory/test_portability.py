"""Export/import round-trips exactly, encrypted or not; bad files fail clearly."""

from __future__ import annotations

import io
import json
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import main
from hindsight_lg.errors import ConflictError
from hindsight_lg.memory.capture.spool import Spool
from hindsight_lg.memory.lifecycle.erasure import forget_namespace
from hindsight_lg.memory.transfer.portability import export_namespace, import_namespace
from hindsight_lg.model import Kind, MemoryRecord, Scope, Status
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)
RECORDS = st.lists(
    st.builds(
        MemoryRecord,
        namespace=st.just("src"),
        content=TEXT.filter(lambda t: "\x00" not in t),
        kind=st.sampled_from(list(Kind)),
        scope=st.sampled_from(list(Scope)),
        status=st.sampled_from(list(Status)),
        agent_id=st.sampled_from(["", "a1"]),
        importance=st.floats(0, 1),
        version=st.integers(1, 10**6),
        event_time=st.floats(0, 4e9),
        entities=st.lists(TEXT, max_size=3),
        meta=st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    ),
    max_size=5,
)


def _memory() -> HindsightMemory:
    return HindsightMemory(InMemoryBackend(), HashingEmbedder(), cache=False)


@settings(max_examples=40, deadline=None)
@given(records=RECORDS, vectors=st.booleans())
def test_export_import_restores_exactly(
    records: list[MemoryRecord], vectors: bool
) -> None:
    """Every field of every record survives export and import (vectors optional)."""
    source, target = _memory(), _memory()
    for r in records:
        r.dense = [float(x) for x in source.embedder.embed([r.content])[0]]
    source.backend.upsert("src", records)
    buffer = io.StringIO()
    export_namespace(source, "src", buffer, vectors=vectors)
    import_namespace(target, io.StringIO(buffer.getvalue()).readlines())
    got = {r.id: r.to_dict() for r in target.backend.query("src", _all(), limit=99)}
    assert got == {r.id: r.to_dict() for r in records}


def _all():  # type: ignore[no-untyped-def]
    from hindsight_lg.backends.base import Where

    return Where(statuses=())


def test_encrypted_export_needs_the_passphrase() -> None:
    """An encrypted export hides content and opens only with its passphrase."""
    source = _memory()
    source.capture("My bank PIN hint is the blue door", namespace="u")
    buffer = io.StringIO()
    export_namespace(source, "u", buffer, passphrase="correct horse")
    assert "blue door" not in buffer.getvalue()
    lines = buffer.getvalue().splitlines()
    with pytest.raises(ValueError, match="wrong passphrase"):
        import_namespace(_memory(), lines, passphrase="wrong")
    target = _memory()
    import_namespace(target, lines, passphrase="correct horse")
    assert "blue door" in target.list_memories("u")[0].content


@settings(max_examples=60, deadline=None)
@given(
    garbage=st.lists(
        st.one_of(TEXT, st.builds(json.dumps, st.dictionaries(TEXT, TEXT))), max_size=4
    )
)
def test_fuzzed_import_fails_cleanly_and_writes_nothing(garbage: list[str]) -> None:
    """Random or truncated files raise ValueError and leave the store empty."""
    memory = _memory()
    header = json.dumps(
        {"format": "hindsight-lg-export", "version": 1, "namespace": "u"}
    )
    for lines in (garbage, [header, *garbage]):
        with pytest.raises(ValueError):
            import_namespace(memory, lines)
    assert memory.backend.namespaces() == []


def test_cli_export_import_forget_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI moves a namespace to another store and erases it with zero left."""
    src, dst, out = tmp_path / "a.db", tmp_path / "b.db", tmp_path / "u.jsonl"
    with HindsightMemory.from_uri(
        str(src), embedder=HashingEmbedder(), spool=tmp_path / "s"
    ) as m:
        m.capture("I prefer green tea over coffee. Ana lives in Lisbon.", namespace="u")
        m.spool.append({"messages_or_text": "pending secret", "namespace": "u"})  # type: ignore[union-attr]
    common = ["--embedder", "hashing", "-n", "u"]
    assert main(["export", "--uri", str(src), *common, "-o", str(out)]) == 0
    assert main(["import", "--uri", str(dst), "--embedder", "hashing", str(out)]) == 0
    spool = ["--spool", str(tmp_path / "s")]
    assert main(["forget", "--uri", str(dst), *common, "--verify", "--yes"]) == 0
    capsys.readouterr()
    assert (
        main(["forget", "--uri", str(src), *common, *spool, "--verify", "--yes"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert set(report["left"].values()) == {0} and report["removed"]["records"] > 0
    assert b"pending secret" not in (tmp_path / "s").read_bytes()


def test_two_threads_lose_no_update_under_cas() -> None:
    """Two writers incrementing one memory 1,000 times with CAS retries lose nothing."""
    memory = _memory()
    (record,) = memory.capture("I prefer green tea over coffee", namespace="u")
    conflicts = [0]

    def bump(times: int) -> None:
        for _ in range(times):
            while True:
                current = memory.get("u", record.id)
                assert current is not None
                try:
                    memory.update(
                        "u",
                        record.id,
                        expected_version=current.version,
                        importance=round(current.importance + 0.0001, 6),
                    )
                    break
                except ConflictError:
                    conflicts[0] += 1

    threads = [threading.Thread(target=bump, args=(500,)) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    final = memory.get("u", record.id)
    assert final is not None and final.version == record.version + 1000


def test_forget_namespace_leaves_other_tenants(tmp_path: Path) -> None:
    """Erasing one tenant keeps another tenant's records and spooled captures."""
    memory = _memory()
    spool = Spool(tmp_path / "s")
    memory.capture("I prefer green tea", namespace="a")
    memory.capture("I prefer black coffee", namespace="b")
    spool.append({"messages_or_text": "x", "namespace": "b"})
    report = forget_namespace(memory, "a", spool=spool)
    assert report.clean and len(memory.list_memories("b")) == 1
    assert len(spool.pending("b")) == 1
