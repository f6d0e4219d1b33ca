"""Export/import round-trips exactly, encrypted or not; bad files fail clearly."""

from __future__ import annotations

import functools
import io
import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import main
from hindsight_lg.errors import ConflictError, StoreError
from hindsight_lg.memory.durability.spool import Spool
from hindsight_lg.memory.jobs.erasure import forget_namespace
from hindsight_lg.memory.jobs.portability import (
    FORMAT,
    FORMAT_VERSION,
    export_namespace,
    import_namespace,
)
from hindsight_lg.model import Edge, EdgeType, Kind, MemoryRecord, Scope, Status
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend
from tests.memory._meta import meta_ok

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
        # Only what remember() accepts: a reserved key ("store") with a value
        # its readers cannot use is refused at the write (test below).
        meta=st.dictionaries(st.text(max_size=5), st.integers(), max_size=2).filter(
            meta_ok
        ),
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
    import_namespace(
        target, io.StringIO(buffer.getvalue()).readlines(), namespace="src"
    )
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
        import_namespace(_memory(), lines, namespace="u", passphrase="wrong")
    target = _memory()
    import_namespace(target, lines, namespace="u", passphrase="correct horse")
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
        {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "namespace": "u",
            "export_id": "e",
        }
    )
    for lines in (garbage, [header, *garbage]):
        with pytest.raises(ValueError):
            import_namespace(memory, lines, namespace="u")
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
    assert main(["import", "--uri", str(dst), *common, str(out)]) == 0
    spool = ["--spool", str(tmp_path / "s")]
    assert main(["forget", "--uri", str(dst), *common, "--verify", "--yes"]) == 0
    capsys.readouterr()
    assert (
        main(["forget", "--uri", str(src), *common, *spool, "--verify", "--yes"]) == 0
    )
    report = json.loads(capsys.readouterr().out)
    assert set(report["left"].values()) == {0} and report["removed"]["records"] > 0
    assert b"pending secret" not in (tmp_path / "s").read_bytes()


def test_cli_forget_with_the_stores_own_spool_counts_each_capture_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--spool naming the store's own spool erases its pending captures, counted once."""
    db = str(tmp_path / "a.db")
    with HindsightMemory.from_uri(db, embedder=HashingEmbedder()) as m:
        m.capture("I prefer green tea over coffee.", namespace="u")
        m.flush()
        m.spool.append({"messages_or_text": "pending secret", "namespace": "u"})  # type: ignore[union-attr]
    argv = ["forget", "--uri", db, "--embedder", "hashing", "-n", "u", "--yes"]
    assert main([*argv, "--spool", db + ".spool", "--verify"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert 1 == report["removed"]["spooled"]
    assert set(report["left"].values()) == {0}
    assert b"pending secret" not in Path(db + ".spool").read_bytes()


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


# -- an export file is untrusted input --------------------------------------


def _exported(passphrase: str | None = None, namespace: str = "u") -> list[str]:
    """An export of two memories (with edges and audit) as a list of lines."""
    source = _memory()
    lives = source.remember("Ana lives in Lisbon", namespace=namespace)
    tea = source.remember("Ana prefers green tea", namespace=namespace)
    edge = Edge(namespace, lives.id, tea.id, EdgeType.SUPPLEMENTS)
    source.backend.add_edges(namespace, [edge])
    buffer = io.StringIO()
    export_namespace(source, namespace, buffer, passphrase=passphrase)
    return buffer.getvalue().splitlines()


def _edit(
    lines: list[str], kind: str, change: Callable[[dict[str, Any]], None]
) -> None:
    """Apply ``change`` to the data of the last plaintext line of ``kind``."""
    index = max(i for i, line in enumerate(lines) if f'"type": "{kind}"' in line)
    item = json.loads(lines[index])
    change(item["data"])
    lines[index] = json.dumps(item, ensure_ascii=False)


def _set(name: str, value: object) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.__setitem__(name, value)


STORE_LIMITS = {
    # Each passed the old checks and fails to write on a Milvus server.
    "audit op over 32 bytes": ("audit", _set("op", "x" * 40)),
    "id over 64 bytes": ("record", _set("id", "é" * 33)),
    "agent_id over 512 bytes": ("record", _set("agent_id", "é" * 257)),
    "thread_id over 512 bytes": ("record", _set("thread_id", "t" * 513)),
    "stored document over 64 KiB": ("record", _set("content", "\U0001f600" * 16400)),
    "time past year 9999": ("record", _set("event_time", 1e20)),
    "edge end over 64 bytes": ("edge", _set("dst", "entity:" + "é" * 30)),
    "audit memory_id over 64 bytes": ("audit", _set("memory_id", "m" * 65)),
}


@pytest.mark.parametrize("kind, change", STORE_LIMITS.values(), ids=STORE_LIMITS)
def test_an_item_over_a_store_limit_writes_nothing(
    kind: str, change: Callable[[dict[str, Any]], None]
) -> None:
    """Every item is held to the strictest backend's limits before the first write."""
    lines = _exported()
    _edit(lines, kind, change)
    target = _memory()
    with pytest.raises(ValueError, match="line [0-9]+: "):
        import_namespace(target, lines, namespace="u")
    assert [] == target.backend.namespaces()


def test_an_overlong_audit_op_writes_nothing_to_milvus_lite(
    memory: HindsightMemory, namespace: str
) -> None:
    """The reported case: a 40-character op, after two records, leaves the store as it was."""
    lines = _exported()
    _edit(lines, "audit", _set("op", "x" * 40))
    with pytest.raises(ValueError, match="op is longer than 32 bytes"):
        import_namespace(memory, lines, namespace=namespace)
    assert 0 == memory.backend.count(namespace, _all())


def test_the_target_namespace_is_always_the_callers() -> None:
    """A file naming tenant 'victim' imports only where the caller says."""
    lines = _exported(namespace="victim")
    target = _memory()
    with pytest.raises(TypeError, match="namespace"):
        import_namespace(target, lines)  # type: ignore[call-arg]
    import_namespace(target, lines, namespace="mine")
    assert ["mine"] == target.backend.namespaces()


def test_cli_import_requires_the_target_namespace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`hindsight-lg import FILE` without -n is a usage error and writes nothing."""
    out, db = tmp_path / "victim.jsonl", tmp_path / "b.db"
    out.write_text("\n".join(_exported(namespace="victim")) + "\n")
    with pytest.raises(SystemExit) as exit_info:
        main(["import", "--uri", str(db), "--embedder", "hashing", str(out)])
    assert 2 == exit_info.value.code
    assert "--namespace" in capsys.readouterr().err
    assert not db.exists()


def test_a_plaintext_file_is_refused_when_a_passphrase_is_given() -> None:
    """Stripping an export's encryption does not make it importable."""
    target = _memory()
    with pytest.raises(ValueError, match="not encrypted"):
        import_namespace(target, _exported(), namespace="u", passphrase="secret")
    assert [] == target.backend.namespaces()


def _swap(lines: list[str]) -> list[str]:
    return [lines[0], lines[2], lines[1], *lines[3:]]


def _duplicate(lines: list[str]) -> list[str]:
    return [*lines[:2], lines[1], *lines[2:]]


def _drop(lines: list[str]) -> list[str]:
    return [lines[0], *lines[2:]]


def _replace_end(lines: list[str]) -> list[str]:
    other = _exported(passphrase="correct horse")
    return [*lines[:-1], other[-1]]


TAMPERING = {
    "lines swapped": (_swap, "out of sequence"),
    "line duplicated": (_duplicate, "out of sequence"),
    "line dropped": (_drop, "out of sequence"),
    # Each export has its own salt, so another export's line does not even
    # decrypt; the export id inside the line is the second lock.
    "line from another export": (_replace_end, "cannot decrypt|another export"),
}


@pytest.mark.parametrize("tamper, message", TAMPERING.values(), ids=TAMPERING)
def test_encrypted_lines_are_bound_to_their_place_and_export(
    tamper: Callable[[list[str]], list[str]], message: str
) -> None:
    """Moving, repeating, dropping or transplanting an encrypted line is refused."""
    lines = _exported(passphrase="correct horse")
    target = _memory()
    with pytest.raises(ValueError, match=message):
        import_namespace(
            target, tamper(lines), namespace="u", passphrase="correct horse"
        )
    assert [] == target.backend.namespaces()


def test_an_edited_header_is_refused() -> None:
    """The end line authenticates the header: a flipped field fails the import."""
    lines = _exported(passphrase="correct horse")
    header = json.loads(lines[0])
    header["embedder"] = "someone-else"
    lines[0] = json.dumps(header)
    with pytest.raises(ValueError, match="header was changed"):
        import_namespace(_memory(), lines, namespace="u", passphrase="correct horse")


def test_duplicate_ids_are_reported_as_such() -> None:
    """Two records with one id name the duplicate and where it first appeared."""
    lines = _exported()
    first = json.loads(lines[1])["data"]["id"]
    _edit(lines, "record", _set("id", first))
    with pytest.raises(ValueError, match=f"line 3: duplicate record id '{first}'"):
        import_namespace(_memory(), lines, namespace="u")


def test_an_import_cut_off_by_the_store_says_to_run_it_again() -> None:
    """A store failure part-way raises StoreError with a note; running again completes."""
    lines, target = _exported(), _memory()
    real = target.backend.append_audit
    target.backend.append_audit = _raise_store_error  # type: ignore[method-assign]
    with pytest.raises(StoreError) as failure:
        import_namespace(target, lines, namespace="u")
    assert "importing the same file again finishes it" in str(failure.value.__notes__)
    target.backend.append_audit = real  # type: ignore[method-assign]
    stats = import_namespace(target, lines, namespace="u")
    assert (2, 2) == (stats.records, len(target.backend.audit("u")))


def _raise_store_error(*_: object) -> None:
    raise StoreError("disk full")


def test_a_plaintext_line_from_another_export_is_refused() -> None:
    """Splicing two plaintext exports together is caught by the export id."""
    lines, other = _exported(), _exported()
    with pytest.raises(ValueError, match="line 2: the line belongs to another export"):
        import_namespace(_memory(), [lines[0], other[1], *lines[2:]], namespace="u")


@functools.cache
def _one_export() -> tuple[str, ...]:
    return tuple(_exported())


@settings(max_examples=30, deadline=None)
@given(order=st.permutations(range(1, 7)), drop=st.booleans())
def test_any_reordering_or_drop_of_lines_is_refused(
    order: list[int], drop: bool
) -> None:
    """Every permutation but the original, with or without a dropped line, writes nothing."""
    header, *lines = _one_export()
    assert 6 == len(lines)  # 2 records, 1 edge, 2 audit entries, the end line
    body = [lines[i - 1] for i in order][: 5 if drop else None]
    target = _memory()
    if body == lines:
        import_namespace(target, [header, *body], namespace="u")
        assert 2 == target.backend.count("u", _all())
        return
    with pytest.raises(ValueError):
        import_namespace(target, [header, *body], namespace="u")
    assert [] == target.backend.namespaces()


def test_a_failed_cli_import_leaves_no_new_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Importing a file that is no export fails and creates no store, spool or lock."""
    notes = tmp_path / "notes.json"
    notes.write_text('{"hello": 1}\n')
    before = sorted(p.name for p in tmp_path.iterdir())
    db = str(tmp_path / "new.db")
    assert 2 == main(
        ["import", "--uri", db, "-n", "u", "--embedder", "hashing", str(notes)]
    )
    assert "not a hindsight-lg-export file" in capsys.readouterr().err
    assert before == sorted(p.name for p in tmp_path.iterdir())


def test_import_opens_the_memory_only_for_a_file_that_checks_out() -> None:
    """Given a function that opens the memory, import calls it once the file is valid."""
    opened: list[HindsightMemory] = []

    def opener() -> HindsightMemory:
        opened.append(_memory())
        return opened[-1]

    with pytest.raises(ValueError):
        import_namespace(opener, ['{"hello": 1}'], namespace="u")
    assert [] == opened
    stats = import_namespace(opener, _exported(), namespace="u")
    assert (1, 2) == (len(opened), stats.records)
    assert 2 == len(opened[0].list_memories("u"))


@pytest.mark.parametrize(
    "meta",
    [
        {"store": 0},
        {"store": {"namespace": [], "key": "k", "value": {}}},
        {"confirmations": "x"},
        {"derived_from": "m1"},
        ["not", "a", "mapping"],
    ],
)
def test_remember_refuses_meta_its_readers_cannot_use(meta: Any) -> None:
    """A reserved meta key with a bad value fails the write, which keeps nothing."""
    memory = _memory()
    with pytest.raises(ValueError, match="meta"):
        memory.remember("I like tea", namespace="u", meta=meta)
    assert memory.backend.query("u", _all(), limit=9) == []
    kept = memory.remember(
        "I like tea", namespace="u", meta={"source": "crm", "confirmations": 2}
    )
    assert kept.meta == {"source": "crm", "confirmations": 2}
