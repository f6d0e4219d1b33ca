"""The ``hindsight-lg`` command: demo, then recall, list and stats on its file."""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Iterator

import pytest
import structlog

from hindsight_lg.cli import main


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Milvus Lite file the demo has filled (run once for the module)."""
    return str(tmp_path_factory.mktemp("cli") / "demo.db")


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    # The CLI configures structlog, as applications do; undo it for other tests.
    yield
    structlog.reset_defaults()


@pytest.fixture(scope="module")
def demo_output(demo_db: str) -> str:
    """What ``hindsight-lg demo`` prints with the hashing embedder."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["demo", "--uri", demo_db, "--embedder", "hashing"])
    structlog.reset_defaults()
    assert 0 == code
    return out.getvalue()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    assert 0 == main(list(argv))
    return capsys.readouterr().out


def test_demo_captures_sessions_and_answers_questions(demo_output: str) -> None:
    """The demo reports what each turn became, the superseded opinion, and answers."""
    assert "== session 1" in demo_output and "== session 3" in demo_output
    assert re.search(r"^\d+ memories, \d+ superseded:$", demo_output, re.M)
    assert "? What does Maya think about Redis for caching?" in demo_output
    assert "Redis is fine for caching now" in demo_output


def test_recall_prints_scored_memories(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``recall`` prints memories with scores and the budget used."""
    out = run(
        capsys,
        "recall",
        "Redis caching",
        "-n",
        "demo-user",
        "--uri",
        demo_db,
        "--embedder",
        "hashing",
    )
    assert "Redis is fine for caching" in out
    assert "tokens)" in out.splitlines()[-1]


def test_recall_json_has_paths(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``recall --json`` gives ids, scores and per-path scores."""
    out = run(
        capsys,
        "recall",
        "Lena",
        "-n",
        "demo-user",
        "--uri",
        demo_db,
        "--embedder",
        "hashing",
        "--json",
    )
    rows = json.loads(out)
    assert rows and {"id", "score", "paths", "content"} <= set(rows[0])


def demo_counts(demo_output: str) -> tuple[int, int]:
    """(memories, superseded) as the demo reported them."""
    m = re.search(r"^(\d+) memories, (\d+) superseded:$", demo_output, re.M)
    assert m is not None
    return int(m.group(1)), int(m.group(2))


def test_list_with_history_adds_superseded(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``list --history`` shows what the demo kept, superseded ones included."""
    total, superseded = demo_counts(demo_output)
    args = ["list", "-n", "demo-user", "--uri", demo_db, "--embedder", "hashing"]
    active = run(capsys, *args).splitlines()[-1]
    history = run(capsys, *args, "--history")
    assert f"({total - superseded} memories)" == active
    assert f"({total} memories)" == history.splitlines()[-1]
    assert superseded == history.count(" superseded ")


def test_stats_counts_by_status(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``stats`` prints JSON counts that agree with the demo's own report."""
    total, superseded = demo_counts(demo_output)
    stats = json.loads(
        run(
            capsys,
            "stats",
            "-n",
            "demo-user",
            "--uri",
            demo_db,
            "--embedder",
            "hashing",
        )
    )
    assert total == stats["total"] == sum(stats["by_status"].values())
    assert superseded == stats["by_status"].get("superseded", 0)
