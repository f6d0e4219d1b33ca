"""Smoke run of the LoCoMo bench: one conversation, a few questions, no timing."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_lg.bench.runner import LocomoConfig, headline, run_locomo, write_report
from hindsight_lg.cli import main

DATA = Path(__file__).resolve().parents[3] / "shared/data/locomo/locomo10.json"
needs_data = pytest.mark.skipif(not DATA.exists(), reason=f"{DATA} not present")


@needs_data
def test_locomo_slice_scores_every_system_within_budget(tmp_path: Path) -> None:
    """A tiny slice scores memory and the five baselines on both measures."""
    cfg = LocomoConfig(
        data=DATA,
        conversations=(0,),
        budgets=(250,),
        embedder="hashing",
        out=tmp_path / "locomo",
        questions=4,
        turns=60,
        cache=False,
    )
    run = run_locomo(cfg)
    systems = {s.system for s in run.scores}
    assert {"hindsight", "dense", "bm25", "hybrid", "recent", "stream"} == systems
    assert 24 == len(run.scores)
    assert all(0.0 <= s.recall <= 1.0 and s.tokens <= 250 for s in run.scores)
    covered = [s.coverage for s in run.scores if s.coverage is not None]
    assert covered and all(0.0 <= c <= 1.0 for c in covered)
    report = write_report(cfg, run, "test")
    assert "hindsight / hybrid" in report.read_text()
    assert "## all, answer coverage, 250 tokens" in report.read_text()
    assert (cfg.out / "recall-all-250.png").stat().st_size > 0
    assert "overall" in headline(cfg, run)
    merged = tmp_path / "merged"
    assert 0 == main(["bench", "locomo", "--merge", str(cfg.out), "--out", str(merged)])
    assert "## all, evidence recall, 250 tokens" in (merged / "report.md").read_text()


def test_overhead_command_runs_or_explains(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Outside a source checkout, bench overhead says where to run it."""
    from hindsight_lg._commands import bench

    monkeypatch.setattr(bench, "overhead_script", lambda: None)
    assert 2 == main(["bench", "overhead"])
    assert "benchmarks/overhead.py" in capsys.readouterr().err


def test_tuned_policy_sets_checked_fields() -> None:
    """--policy fields become Policy fields; a wrong name or type is refused."""
    from hindsight_lg.bench.runner import tuned_policy

    tuned = tuned_policy([("near_share", 0.5), ("turn_chars_near", 400), ("rrf_k", 30)])
    assert (0.5, 400, 30) == (tuned.near_share, tuned.turn_chars_near, tuned.rrf_k)
    assert 1.0 == tuned_policy([("near_share", 1)]).near_share  # an int for a float
    with pytest.raises(ValueError, match="no field 'near_shar'"):
        tuned_policy([("near_shar", 0.5)])
    with pytest.raises(ValueError, match="takes a int"):
        tuned_policy([("turn_chars_near", 0.5)])
    with pytest.raises(ValueError, match="takes a bool"):
        tuned_policy([("relevance", 1)])
    with pytest.raises(ValueError, match="takes a int"):
        tuned_policy([("hop_docs", True)])


@needs_data
def test_locomo_policy_option_runs_tuned_and_says_so(tmp_path: Path) -> None:
    """bench locomo --policy runs with the field set and labels the report tuned."""
    out = tmp_path / "tuned"
    args = ["bench", "locomo", "--data", str(DATA), "--conversations", "0"]
    args += ["--questions", "2", "--turns", "40", "--budget", "250", "--no-cache"]
    args += ["--embedder", "hashing", "--out", str(out), "--policy", "near_share=0.5"]
    assert 0 == main(args)
    assert (
        "Policy (tuned, not recall's defaults): near_share=0.5"
        in (out / "report.md").read_text()
    )


@pytest.mark.parametrize(
    ("option", "said"),
    [
        ("near_share", "FIELD=VALUE"),
        ("near_share=half", "not a JSON value"),
        ("near_shar=0.5", "no field 'near_shar'"),
    ],
)
def test_locomo_policy_option_refuses_bad_fields_before_running(
    option: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A malformed or unknown --policy stops the run at once with what to fix."""
    args = ["bench", "locomo", "--data", str(tmp_path / "missing.json")]
    assert 0 != main([*args, "--out", str(tmp_path / "o"), "--policy", option])
    assert said in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
