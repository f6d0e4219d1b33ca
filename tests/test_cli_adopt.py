"""Every command opens a store with the embedder it records, unless told otherwise.

A store remembers the model of its vectors; a command run without
``--embedder`` adopts it, commands that embed nothing run even where that
model is missing, and an explicit ``--embedder`` that disagrees is refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog

from hindsight_lg import HindsightMemory, Kind, Status
from hindsight_lg.cli import main
from hindsight_lg.testing import HashingEmbedder

NAMESPACE = "u1"
MISSING_MODEL = "acme/embedder-not-on-this-machine"


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    # The CLI configures structlog, as applications do; undo it for other tests.
    yield
    structlog.reset_defaults()


class _ElsewhereEmbedder(HashingEmbedder):
    """A model this machine does not have: only the process that wrote had it."""

    def __init__(self) -> None:
        super().__init__(dim=32)
        self.model_id = MISSING_MODEL


def _fill(uri: str, embedder: Any) -> str:
    """Write a few memories with ``embedder``; returns an archived one's id."""
    with HindsightMemory.from_uri(uri, embedder=embedder) as memory:
        memory.capture("I prefer green tea over coffee", namespace=NAMESPACE)
        memory.capture("My sister Anna lives in Lisbon", namespace=NAMESPACE)
        archived = memory.remember(
            "Send the weekly report on Fridays", namespace=NAMESPACE, kind=Kind.TASK
        )
        memory.update(NAMESPACE, archived.id, status=Status.ARCHIVED)
    return archived.id


@pytest.fixture(scope="module")
def hashing_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A Lite file written with a 64-dim hashing embedder, and an archived id."""
    uri = str(tmp_path_factory.mktemp("adopt") / "hashing.db")
    return uri, _fill(uri, HashingEmbedder(dim=64))


@pytest.fixture
def elsewhere_store(tmp_path: Path) -> tuple[str, str]:
    """A Lite file written with a model this machine lacks, and an archived id."""
    uri = str(tmp_path / "elsewhere.db")
    return uri, _fill(uri, _ElsewhereEmbedder())


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_commands_without_embedder_adopt_the_store_s_hashing_model(
    hashing_store: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """list, stats, recall and explain on a hashing-64 store need no --embedder."""
    uri, _ = hashing_store
    store = ["-n", NAMESPACE, "--uri", uri]
    code, out, err = _run(capsys, "list", *store)
    assert (0, "") == (code, err.strip())
    assert "Anna lives in Lisbon" in out
    code, out, err = _run(capsys, "stats", *store)
    assert 0 == code, err
    assert "hashing-64-3" == json.loads(out)["embedder"]
    code, out, err = _run(capsys, "recall", "green tea", *store)
    assert 0 == code, err
    assert "green tea" in out
    code, out, err = _run(capsys, "explain", "Lisbon", *store)
    assert 0 == code, err
    assert "Lisbon" in out


def test_an_explicit_embedder_that_disagrees_is_refused(
    hashing_store: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """--embedder hashing (384 dims) on a hashing-64 store is the mismatch error."""
    uri, _ = hashing_store
    code, out, err = _run(
        capsys, "list", "-n", NAMESPACE, "--uri", uri, "--embedder", "hashing"
    )
    assert 2 == code
    assert "" == out
    assert "holds vectors of hashing-64-3 (dim 64)" in err
    assert "hashing-384-3 (dim 384)" in err


def test_an_explicit_embedder_that_agrees_still_works(
    hashing_store: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """--embedder hashing-64, the store's own model by name, opens it."""
    uri, _ = hashing_store
    argv = ["stats", "-n", NAMESPACE, "--uri", uri, "--embedder", "hashing-64"]
    code, out, err = _run(capsys, *argv)
    assert 0 == code, err
    assert "hashing-64-3" == json.loads(out)["embedder"]


def test_commands_that_embed_nothing_run_without_the_store_s_model(
    elsewhere_store: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """list, stats, audit, export, decay, restore and forget need no model."""
    uri, archived = elsewhere_store
    store = ["-n", NAMESPACE, "--uri", uri]
    code, out, err = _run(capsys, "list", *store, "--history")
    assert 0 == code, err
    assert "Anna lives in Lisbon" in out
    code, out, err = _run(capsys, "stats", *store)
    assert 0 == code, err
    assert MISSING_MODEL == json.loads(out)["embedder"]
    code, out, err = _run(capsys, "audit", archived, *store)
    assert 0 == code, err
    assert "weekly report" in out
    dump = tmp_path / "u1.jsonl"
    code, out, err = _run(capsys, "export", *store, "--out", str(dump))
    assert 0 == code, err
    assert MISSING_MODEL == json.loads(dump.read_text().splitlines()[0])["embedder"]
    code, out, err = _run(capsys, "decay", "--uri", uri, "--dry-run")
    assert 0 == code, err
    assert "dry run" in out
    code, out, err = _run(capsys, "restore", archived, *store)
    assert 0 == code, err
    assert f"{archived} is active" in out
    code, out, err = _run(capsys, "forget", *store, "--yes")
    assert 0 == code, err
    code, out, err = _run(capsys, "namespaces", "--uri", uri)
    assert NAMESPACE not in out.split()


def test_a_command_that_embeds_names_the_missing_model_and_the_fix(
    elsewhere_store: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """recall on a store whose model is missing: one line naming it and --embedder."""
    uri, _ = elsewhere_store
    for command in ("recall", "explain"):
        code, out, err = _run(capsys, command, "tea", "-n", NAMESPACE, "--uri", uri)
        assert 2 == code
        assert "" == out
        [line] = err.strip().splitlines()
        assert line.startswith("error: this store was embedded with ")
        assert f"{MISSING_MODEL} (dim 32)" in line
        assert "--embedder" in line


def test_after_reembed_to_hashing_commands_need_no_flag(tmp_path: Path) -> None:
    """demo, reembed --to hashing-128, then list, stats and recall with no flags."""
    uri = str(tmp_path / "moved.db")
    cli = [sys.executable, "-m", "hindsight_lg.cli"]

    def step(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*cli, *argv], capture_output=True, text=True, timeout=300, check=False
        )

    made = step("demo", "--uri", uri, "--embedder", "hashing")
    assert 0 == made.returncode, made.stderr
    moved = step("reembed", "--uri", uri, "--to", "hashing-128")
    assert 0 == moved.returncode, moved.stderr
    store = ["-n", "demo-user", "--uri", uri]
    listed = step("list", *store)
    assert 0 == listed.returncode, listed.stderr
    assert "Redis" in listed.stdout
    stats = step("stats", *store)
    assert 0 == stats.returncode, stats.stderr
    assert "hashing-128-3" == json.loads(stats.stdout)["embedder"]
    recalled = step("recall", "Redis caching", *store)
    assert 0 == recalled.returncode, recalled.stderr
    assert "Redis is fine for caching" in recalled.stdout


def test_the_panel_opens_a_hashing_store_without_flags(
    hashing_store: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``hindsight-lg panel --uri FILE`` serves a hashing store's pages and search."""
    pytest.importorskip("starlette")
    import uvicorn
    from starlette.testclient import TestClient

    uri, _ = hashing_store
    pages: dict[str, tuple[int, str]] = {}

    def serve(app: Any, **options: Any) -> None:
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            for path in (
                f"/memories?namespace={NAMESPACE}",
                f"/search?namespace={NAMESPACE}&q=green+tea",
            ):
                answer = client.get(path)
                pages[path.split("?")[0]] = (answer.status_code, answer.text)

    monkeypatch.setattr(uvicorn, "run", serve)
    assert 0 == main(["panel", "--uri", uri])
    assert 200 == pages["/memories"][0]
    assert "Anna lives in Lisbon" in pages["/memories"][1]
    assert 200 == pages["/search"][0]
    assert "green tea" in pages["/search"][1]


def test_the_panel_serves_a_store_whose_model_is_missing(
    elsewhere_store: tuple[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Pages list memories; a search answers 503 naming the model to provide."""
    pytest.importorskip("starlette")
    import uvicorn
    from starlette.testclient import TestClient

    uri, _ = elsewhere_store
    answers: dict[str, Any] = {}

    def serve(app: Any, **options: Any) -> None:
        with TestClient(app, base_url="http://127.0.0.1:8765") as client:
            answers["page"] = client.get(f"/memories?namespace={NAMESPACE}")
            answers["search"] = client.get(
                "/api/search", params={"namespace": NAMESPACE, "q": "tea"}
            )

    monkeypatch.setattr(uvicorn, "run", serve)
    assert 0 == main(["panel", "--uri", uri])
    assert 200 == answers["page"].status_code
    assert "Anna lives in Lisbon" in answers["page"].text
    assert 503 == answers["search"].status_code
    assert MISSING_MODEL in answers["search"].json()["error"]
    assert MISSING_MODEL in capsys.readouterr().err  # the warm-up said so at start


@pytest.mark.slow
def test_a_minilm_store_recalls_without_embedder(
    tmp_path: Path, minilm: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A store of MiniLM vectors: recall with no flag loads MiniLM and finds by meaning."""
    uri = str(tmp_path / "minilm.db")
    with HindsightMemory.from_uri(uri, embedder=minilm) as memory:
        memory.capture("I prefer green tea over coffee", namespace=NAMESPACE)
        memory.capture("My sister Anna lives in Lisbon", namespace=NAMESPACE)
    store = ["-n", NAMESPACE, "--uri", uri]
    code, out, err = _run(capsys, "stats", *store)
    assert 0 == code, err
    assert "sentence-transformers/all-MiniLM-L6-v2" == json.loads(out)["embedder"]
    code, out, err = _run(capsys, "recall", "Which city is her sibling in?", *store)
    assert 0 == code, err
    assert "Lisbon" in out.splitlines()[0]
