"""The ``hindsight-lg`` command: demo, then recall, list and stats on its file."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.cli import build_parser, main


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


@pytest.mark.parametrize(
    ("query", "reason"),
    [("   ", "the query is empty"), ("quantum chromodynamics", "bears on this query")],
)
def test_a_recall_that_finds_nothing_says_why(
    demo_output: str,
    demo_db: str,
    capsys: pytest.CaptureFixture[str],
    query: str,
    reason: str,
) -> None:
    """No memory back: stderr says whether the query was empty or nothing bore on it."""
    argv = ["recall", query, "-n", "demo-user", "--uri", demo_db]
    assert 0 == main([*argv, "--embedder", "hashing"])
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1].startswith("(0 memories")
    assert reason in captured.err


def test_a_recall_of_an_overlong_query_says_what_it_did_not_read(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A query past ``max_query_chars`` is answered, and stderr says how much went unread."""
    query = "Redis caching? " + "Q-" * 10_000
    argv = ["recall", query, "-n", "demo-user", "--uri", demo_db]
    assert 0 == main([*argv, "--embedder", "hashing"])
    captured = capsys.readouterr()
    assert f"{len(query) - 4000} characters" in captured.err


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


def test_commands_that_embed_nothing_never_load_a_namespace_into_the_cache(
    demo_output: str,
    demo_db: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """list, stats, audit, export and namespaces read the store, not a loaded cache.

    Loading a namespace into the read cache costs seconds at 10,000 memories;
    a one-shot command reads what it prints straight from Milvus.
    """
    from hindsight_lg.backends.cached import CachedBackend

    def refuse(*_: object) -> None:
        raise AssertionError("a command that embeds nothing loaded the read cache")

    monkeypatch.setattr(CachedBackend, "_load", refuse)
    store = ["--uri", demo_db, "--embedder", "hashing"]
    named = ["-n", "demo-user", *store]
    rows = json.loads(run(capsys, "list", *named, "--json"))
    assert rows
    assert json.loads(run(capsys, "stats", *named))["total"] >= len(rows)
    assert rows[0]["id"][:8] in run(capsys, "audit", rows[0]["id"], *named)
    run(capsys, "export", *named, "-o", str(tmp_path / "out.jsonl"))
    assert (tmp_path / "out.jsonl").stat().st_size > 0
    assert "demo-user" in run(capsys, "namespaces", *store)


def test_an_unknown_namespace_is_named_by_list_stats_and_audit(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Read commands given a namespace with no memories exit 1 naming the known ones."""
    store = ["-n", "nobody", "--uri", demo_db, "--embedder", "hashing"]
    for argv in (["list", *store], ["stats", *store], ["audit", "abc", *store]):
        assert 1 == main(argv)
        err = capsys.readouterr().err
        assert "no memories in namespace 'nobody'" in err and "'demo-user'" in err


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


# -- failing loudly and cleanly ------------------------------------------------

TRACEBACK = re.compile(r"Traceback|File \".*\", line \d+")


def exit_code(argv: list[str]) -> int:
    """The CLI's exit code, whether returned or raised by argparse as SystemExit."""
    try:
        return main(argv)
    except SystemExit as exc:
        assert isinstance(exc.code, int), exc.code
        return exc.code


def fails(capfd: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    """Run the CLI; return its exit code and stderr, checked free of tracebacks."""
    code = exit_code(argv)
    out, err = capfd.readouterr()
    assert not TRACEBACK.search(out + err), out + err
    return code, err


def store(demo_db: str) -> list[str]:
    return ["--uri", demo_db, "--embedder", "hashing"]


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["list", "-n", ""], 2, "empty or invisible"),
        (["export", "-n", "\u200b"], 2, "empty or invisible"),
        (["consolidate", "-n", " \u2060 "], 2, "empty or invisible"),
        (["recall", "x", "-n", "demo-user", "-k", "0"], 2, "at least 1"),
        (["list", "-n", "demo-user", "--limit", "0"], 2, "at least 1"),
        (["list", "-n", "demo-user", "--limit", "-1"], 2, "at least 1"),
        (["reembed", "--prefix", "a;b", "--to", "hashing"], 2, "prefix"),
        (["restore", "-n", "demo-user", "0000dead"], 1, "no memory '0000dead'"),
        (["rollback", "-n", "demo-user"], 2, "name one thing to roll back"),
        (["rollback", "-n", "demo-user", "--memory", "0000dead"], 1, "no memory"),
        (["rollback", "-n", "demo-user", "--since", "soon"], 2, "not an ISO date"),
        (
            [
                "rollback",
                "-n",
                "demo-user",
                "--since",
                "2026-02-01",
                "--until",
                "2026-01-01",
            ],
            2,
            "--since must be before --until",
        ),
        (["list", "-n", "nobody"], 1, "known namespaces: 'demo-user'"),
        (["stats", "-n", "nobody"], 1, "hindsight-lg namespaces"),
        (["export", "-n", "demo-user", "-o", "/nonexistent/x"], 2, "/nonexistent/x"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else str(v),
)
def test_bad_arguments_fail_with_one_line_and_the_right_code(
    demo_output: str,
    demo_db: str,
    capfd: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    """Each bad argument gives exit 1 (nothing to act on) or 2 (error) and says why."""
    extra = ["--uri", demo_db] if argv[0] == "reembed" else store(demo_db)
    got, err = fails(capfd, [*argv, *extra])
    assert code == got, err
    assert message in err


@pytest.mark.parametrize("uri", ["/nonexistent/dir/x.db", "typo.db"])
def test_read_commands_refuse_a_uri_with_no_store_and_create_nothing(
    tmp_path: Path,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    uri: str,
) -> None:
    """list on a --uri that names no store exits 2 and leaves no file or folder."""
    monkeypatch.chdir(tmp_path)
    code, err = fails(capfd, ["list", "-n", "u1", "--uri", uri])
    assert (2, True) == (code, "no store at" in err)
    assert not Path(uri).exists() and not Path("/nonexistent").exists()


def test_forget_without_a_terminal_needs_yes(
    demo_output: str,
    demo_db: str,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """forget with stdin at EOF erases nothing and names --yes; nothing is erased."""
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    argv = ["forget", "-n", "demo-user", "--verify", *store(demo_db)]
    code, err = fails(capfd, argv)
    assert (1, True) == (code, "--yes" in err)
    assert 0 == main(["list", "-n", "demo-user", *store(demo_db)])


def test_namespaces_lists_every_tenant_with_its_count(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``namespaces`` prints the demo's tenant with as many memories as it reported."""
    total, _ = demo_counts(demo_output)
    rows = json.loads(run(capsys, "namespaces", *store(demo_db), "--json"))
    assert {"demo-user": total} == rows


def test_a_read_only_mount_is_named(
    demo_db: str,
    capfd: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A store on a read-only file system says so, not that Milvus is unreachable."""
    real = os.statvfs

    class ReadOnly:
        def __init__(self, path: Any) -> None:
            self.f_flag = real(path).f_flag | os.ST_RDONLY

    monkeypatch.setattr("os.statvfs", ReadOnly)
    code, err = fails(capfd, ["list", "-n", "demo-user", *store(demo_db)])
    assert 2 == code
    assert "read-only file system" in err and "unreachable" not in err


def test_import_of_a_hostile_file_is_a_clean_error(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A header with a numeric namespace or JSON nested 100,000 deep fails in one line."""
    numeric = tmp_path / "numeric.jsonl"
    numeric.write_text(
        json.dumps(
            {
                "type": "header",
                "format": "hindsight-lg-export",
                "version": 2,
                "namespace": 42,
                "dim": 384,
                "embedder": "hashing-384-3",
            }
        )
        + "\n"
    )
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 100_000 + "]" * 100_000 + "\n")
    for path in (numeric, deep):
        argv = ["import", str(path), "-n", "u1", "--uri", str(tmp_path / "s.db")]
        code, err = fails(capfd, [*argv, "--embedder", "hashing"])
        errors = [line for line in err.splitlines() if line.startswith("error: ")]
        assert (2, 1) == (code, len(errors)), err


HOLD = """
import sys, time
from hindsight_lg import HindsightMemory
with HindsightMemory.from_uri(sys.argv[1], embedder="hashing"):
    print("held", flush=True)
    time.sleep(60)
"""


def test_a_locked_lite_file_prints_our_message_only(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """When another process holds the file, stderr is one error line, no traceback."""
    uri = str(tmp_path / "held.db")
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, uri], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and "held" in holder.stdout.readline()
        code, err = fails(
            capfd, ["stats", "-n", "u1", "--uri", uri, "--embedder", "hashing"]
        )
    finally:
        holder.kill()
        holder.wait()
    assert 2 == code
    assert ["error"] == [line.split(":")[0] for line in err.strip().splitlines()]
    assert "another process holds this Milvus Lite file" in err


def test_reembed_from_the_cli_works_on_a_fresh_process(tmp_path: Path) -> None:
    """demo then reembed in separate processes switches the file to the new model."""
    uri = str(tmp_path / "fresh.db")
    cli = [sys.executable, "-m", "hindsight_lg.cli"]

    def step(*argv: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*cli, *argv], capture_output=True, text=True, timeout=300, check=False
        )
        assert not TRACEBACK.search(done.stdout + done.stderr), done.stderr
        return done

    assert 0 == step("demo", "--uri", uri, "--embedder", "hashing").returncode
    moved = step("reembed", "--uri", uri, "--to", "hashing-128")
    assert 0 == moved.returncode, moved.stderr
    assert "re-embedded into hindsight_r2" in moved.stdout
    listed = step("stats", "-n", "demo-user", "--uri", uri, "--embedder", "hashing-128")
    assert 0 == listed.returncode, listed.stderr
    assert json.loads(listed.stdout)["total"] > 0


def first_replies(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("  -> ")][:1]


def test_template_demo_starts_fresh_and_names_its_speakers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Two template runs answer the first turn alike; memories name who said them."""
    argv = ["demo", "--template", "assistant", "--embedder", "hashing"]
    first = run(capsys, *argv)
    second = run(capsys, *argv)
    assert first_replies(first) == first_replies(second)
    assert "anything on that yet" in first_replies(second)[0]
    assert "maya: " in second and "user:" not in second and "user," not in second


# -- the fuzz: any argv ends in 0, 1 or 2 and never in a traceback ---------------


# panel serves until interrupted: a fuzz that starts it never ends.
def command_names() -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return set(sub.choices)


# demo writes a store of its own and panel serves until interrupted: both have
# tests of their own.
FUZZ_COMMANDS = sorted(command_names() - {"demo", "panel"})


@pytest.fixture(scope="module")
def fuzz_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small Lite store the fuzz may read and damage (not the demo's)."""
    uri = str(tmp_path_factory.mktemp("fuzz") / "fuzz.db")
    with HindsightMemory.from_uri(uri, embedder="hashing") as memory:
        memory.capture("I prefer green tea over coffee", namespace="u1")
        memory.capture("Remind me to call Anna on Friday", namespace="u2")
    return uri


fuzz_tokens = st.lists(
    st.sampled_from(
        [
            "-n",
            "u1",
            "nobody",
            "",
            "\u200b",
            "-k",
            "0",
            "-1",
            "--limit",
            "--json",
            "--history",
            "--budget",
            "--yes",
            "--verify",
            "--uri",
            "/nonexistent/x.db",
            "--to",
            "hashing",
            "--prefix",
            "a;b",
            "-o",
            "/nonexistent/o",
            "x",
            "--",
            "--kind",
            "task",
            "99999999 days ago",
            "december 9999",
        ]
    )
    | st.text(max_size=10),
    max_size=7,
)


@settings(
    max_examples=40,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(command=st.sampled_from(FUZZ_COMMANDS), rest=fuzz_tokens)
def test_any_argv_exits_0_1_or_2_without_a_traceback(
    fuzz_db: str,
    capfd: pytest.CaptureFixture[str],
    command: str,
    rest: list[str],
) -> None:
    """Whatever the arguments, the exit code is 0, 1 or 2 and no output shows a traceback."""
    tail = ["--uri", fuzz_db]
    if command not in ("reembed", "bench", "namespaces"):
        tail += ["--embedder", "hashing"]
    sys_stdin = sys.stdin
    sys.stdin = io.StringIO("")  # forget's prompt reads EOF, never the terminal
    try:
        code = exit_code([command, *rest, *tail])
    finally:
        sys.stdin = sys_stdin
        structlog.reset_defaults()
    out, err = capfd.readouterr()
    assert code in (0, 1, 2), err
    assert not TRACEBACK.search(out + err), out + err


def test_pymilvus_error_logs_stay_out_of_cli_output_unless_verbose() -> None:
    """pymilvus's own 'RPC error ... Traceback:' log is dropped; -v lets it through."""
    import logging

    noisy = logging.getLogger("pymilvus.decorators")
    rpc_error = logging.LogRecord(
        noisy.name,
        logging.ERROR,
        "decorators.py",
        1,
        "RPC error\nTraceback:",
        None,
        None,
    )
    argv = ["list", "-n", "u1", "--uri", "/nonexistent/x.db"]  # fails fast
    assert 2 == main(argv)
    quiet = bool(noisy.filter(rpc_error))
    assert 2 == main(["-v", *argv])
    verbose = bool(noisy.filter(rpc_error))
    assert (False, True) == (quiet, verbose)


def test_consolidate_with_nothing_to_cluster_says_why(
    demo_output: str, demo_db: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A consolidation that writes nothing names the rule no group of episodes met."""
    argv = ["consolidate", "--uri", demo_db, "--embedder", "hashing", "-n", "demo-user"]
    assert 0 == main(argv)
    first = capsys.readouterr()
    assert 0 == main(argv)  # the second run finds the episodes already consolidated
    second = capsys.readouterr()
    assert "(0 semantic memories)" in second.out
    assert "nothing to consolidate: no group of 3 or more active episodes" in second.err
    assert "nothing to consolidate" not in first.err or "(0 " in first.out


def test_decay_on_a_months_old_store_warns_and_recall_still_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo store is months old: decay says so, --dry-run changes nothing, and
    recall still answers a direct question after the real run."""
    db = str(tmp_path / "demo.db")
    store = ["--uri", db, "--embedder", "hashing"]
    run(capsys, "demo", *store)
    listing = ["list", "-n", "demo-user", "--history", *store]
    before = run(capsys, *listing)
    assert 0 == main(["decay", *store, "--dry-run"])
    dry = capsys.readouterr()
    assert "months old" in dry.err and "computed against now" in dry.err
    assert "would go cold" in dry.err and "Run with --dry-run" not in dry.err
    assert "would go cold" in dry.out and "nothing changed" in dry.out
    assert run(capsys, *listing) == before
    assert 0 == main(["decay", *store])
    done = capsys.readouterr()
    cold = int(re.search(r"(\d+) went cold", done.out).group(1))  # type: ignore[union-attr]
    assert cold > 0 and "months old" in done.err and "would go" not in done.err
    answer = run(capsys, "recall", "Where does Maya work?", "-n", "demo-user", *store)
    assert "Lumen Labs" in answer


def test_version_prints_the_package_version_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``hindsight-lg --version`` answers instead of asking for a command."""
    from importlib.metadata import version

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert 0 == done.value.code
    assert f"hindsight-lg {version('hindsight-lg')}" == capsys.readouterr().out.strip()
