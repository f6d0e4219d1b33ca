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
