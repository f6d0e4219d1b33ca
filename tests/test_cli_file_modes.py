"""An export file is its owner's alone, and a failed export leaves nothing half written."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest

import hindsight_lg.memory
from hindsight_lg import HindsightMemory
from hindsight_lg._commands import portability
from hindsight_lg.cli import main
from hindsight_lg.errors import StoreUnavailable
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

# Files would be 0644 under the usual umask unless the code says otherwise.
pytestmark = pytest.mark.usefixtures("usual_umask")


@pytest.fixture
def seeded(monkeypatch: pytest.MonkeyPatch) -> HindsightMemory:
    """The CLI's store: an in-memory one holding a memory of tenant u1."""
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), cache=False)
    memory.capture("My sister Ana lives in Lisbon", namespace="u1")
    memory.flush()
    monkeypatch.setattr(portability, "open_memory", lambda args, **kw: memory)
    return memory


def _export(out: Path) -> int:
    return main(["export", "--embedder", "hashing", "-n", "u1", "-o", str(out)])


def test_an_export_file_is_0600(seeded: HindsightMemory, tmp_path: Path) -> None:
    """The exported tenant's memories are readable by the file's owner only."""
    out = tmp_path / "u1.jsonl"
    assert _export(out) == 0
    assert (oct(stat.S_IMODE(out.stat().st_mode)), "Lisbon" in out.read_text()) == (
        "0o600",
        True,
    )


def test_a_failed_export_keeps_the_file_it_would_have_replaced(
    seeded: HindsightMemory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A store failure mid-export leaves the earlier export whole and no temporary file."""
    out = tmp_path / "u1.jsonl"
    assert _export(out) == 0
    before = out.read_bytes()

    def half_then_fail(memory: Any, namespace: str, fh: Any, **kw: Any) -> None:
        fh.write('{"kind": "header"}\n')
        raise StoreUnavailable("the store went away")

    monkeypatch.setattr(hindsight_lg.memory, "export_namespace", half_then_fail)
    assert _export(out) == 2
    assert (out.read_bytes(), sorted(p.name for p in tmp_path.iterdir())) == (
        before,
        ["u1.jsonl"],
    )
    assert "the store went away" in capsys.readouterr().err
