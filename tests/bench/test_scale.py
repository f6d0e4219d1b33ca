"""Smoke run of the scale bench: tiny sizes, every column filled, every target rated."""

from __future__ import annotations

from pathlib import Path

from hindsight_lg.bench.scale import ScaleConfig, ScaleRow, ScaleRun, run_scale
from hindsight_lg.bench.scale_report import summary, targets, write_scale_report
from hindsight_lg.bench.startup import Startup


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
    # Served from the read cache, dense search costs less than Milvus's own.
    assert run.rows[0].paths["dense"][0] < run.rows[0].raw[0]
    report = write_scale_report(cfg, run, "test").read_text()
    assert "recall p95 / raw filtered search p95, 45 in 3 ns" in report
    assert "recall p95, 30 in one namespace" in report
    assert "capture() one turn per call" in report


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
