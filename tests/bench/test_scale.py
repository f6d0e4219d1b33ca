"""Smoke run of the scale bench: tiny sizes, every column filled, every target rated."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from hindsight_lg.bench._stages import StageClock
from hindsight_lg.bench.scale import ScaleConfig, ScaleRow, ScaleRun, run_scale
from hindsight_lg.bench.scale_report import summary, targets, write_scale_report
from hindsight_lg.bench.startup import Startup
from hindsight_lg.testing import HashingEmbedder

PATH_STAGES = ("embed", "reads", "write", "encode", "wait")


def test_scale_bench_reports_capture_recall_raw_search_and_targets(
    tmp_path: Path,
) -> None:
    """Each row has capture rates, recall and raw-search latency, RSS and disk."""
    cfg = ScaleConfig(
        sizes=(45,),
        namespaces=3,
        queries=6,
        captures=15,
        single=30,
        cli=False,
        batch=4,
        out=tmp_path / "scale",
    )
    run = run_scale(cfg, progress=lambda _: None)
    assert [(r.size, r.namespaces) for r in run.rows] == [(45, 3), (30, 1)]
    for row in run.rows:
        assert min(row.capture_per_s, row.batched_per_s, row.submit_per_s) > 0
        assert 0 < row.recall[0] <= row.recall[1]
        assert 0 < row.raw[0] <= row.raw[1]
        assert {"dense", "lexical", "graph", "recency/time"} == set(row.paths)
        assert row.peak_rss_mb > 0 and row.disk_mb > 0 and row.cache_mb > 0
        # Every capture mode has its stages, the model alone and a limit.
        assert set(row.stages) == {"capture", "batched", "submit"}
        assert all(row.model_alone[m] > 0 for m in row.stages)
        for st in row.stages.values():
            top = max(st.ms[s] for s in PATH_STAGES)
            assert st.limit == "commit" or st.ms[st.limit] == top
        capture = row.stages["capture"]
        assert capture.ms["embed"] > 0 and capture.ms["encode"] > 0
        # submit() waits at its end for the last captures to be written.
        assert row.stages["submit"].ms["write"] + row.stages["submit"].ms["wait"] > 0
    # Served from the read cache, dense search costs less than Milvus's own.
    assert run.rows[0].paths["dense"][0] < run.rows[0].raw[0]
    report = write_scale_report(cfg, run, "test").read_text()
    assert "recall p95 / raw filtered search p95, 45 in 3 ns" in report
    assert "recall p95, 30 in one namespace" in report
    assert "capture() one turn per call" in report
    assert "| limited by |" in report


def test_targets_rate_each_measure_against_its_bound() -> None:
    """Ratios are measured over bound, and 'met' follows each target's direction."""
    rows = [
        ScaleRow(100000, namespaces=100, recall=(10.0, 20.0), raw=(200.0, 400.0)),
        ScaleRow(10000, namespaces=1, recall=(30.0, 60.0), capture_per_s=250.0),
    ]
    rows[0].capture_per_s = 50.0
    startup = Startup(import_s=0.5, commands={"list": 0.8, "stats": 1.5})
    found = {
        t.name.split(",")[0]: t for t in targets(ScaleRun(rows, startup), "hashing")
    }
    recall = found["recall p95 / raw filtered search p95"]
    assert (round(recall.ratio, 2), recall.met) == (0.1, True)
    single = found["recall p95"]
    assert (round(single.ratio, 2), single.met) == (1.2, False)
    capture = found["capture() one turn per call"]
    assert (round(capture.ratio, 2), capture.met) == (0.5, False)
    cli = found["CLI command that embeds nothing / import (slowest: stats)"]
    assert (round(cli.ratio, 2), cli.met) == (1.5, False)
    assert "| `stats` | 1.50 | 3.00 |" in summary(
        ScaleConfig(), ScaleRun(rows, startup)
    )


def test_capture_with_a_model_is_reported_against_the_model_alone() -> None:
    """With a real model, capture's ratio to the model's own speed has no pass mark."""
    row = ScaleRow(1000, namespaces=100, capture_per_s=30.0, model_per_s=40.0)
    (capture,) = [
        t for t in targets(ScaleRun([row]), "minilm") if t.name.startswith("capture")
    ]
    assert (capture.ratio, capture.met) == (0.75, None)
    assert "| 30 / 40 per s | 0.75 | - |" in summary(
        ScaleConfig(embedder="minilm"), ScaleRun([row])
    )


def test_the_model_loads_before_capture_is_timed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A lazily loaded model's load time is not counted as capture time."""
    from hindsight_lg.bench import scale

    calls: list[str] = []
    real_rate = scale._model_rate

    def model_rate(memory: object, n: int, rng: object) -> float:
        calls.append("model")
        return real_rate(memory, n, rng)  # type: ignore[arg-type]

    def capture(*args: object) -> None:
        calls.append("capture")

    cfg = ScaleConfig(captures=6, cli=False, single=0)
    row = ScaleRow(6, namespaces=2)
    memory = SimpleNamespace(embedder=HashingEmbedder())
    monkeypatch.setattr(scale, "_model_rate", model_rate)
    monkeypatch.setattr(scale, "_capture", capture)
    monkeypatch.setattr(scale, "_batched", lambda *a: None)
    monkeypatch.setattr(scale, "_submit", lambda *a: None)
    memory.embedder.inner = memory.embedder  # the bench wraps its model
    scale._captures(memory, StageClock(), cfg, row, 1)
    assert calls == ["model", "capture"]
