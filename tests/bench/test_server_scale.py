"""The server scale bench's arithmetic and its command line (no server needed)."""

from __future__ import annotations

import math
import threading
import time

import pytest

from hindsight_lg.bench._stages import StageClock, Stages
from hindsight_lg.bench.scale import ScaleRow
from hindsight_lg.bench.server_report import growth_table, server_targets
from hindsight_lg.bench.server_scale import ServerRow, ServerRun, exponent
from hindsight_lg.cli import main


def test_exponent_recovers_a_power_law() -> None:
    """A figure that grows as size**0.5 fits an exponent of 0.5; a flat one 0."""
    sizes = [10_000, 100_000, 1_000_000]
    assert exponent([(s, 3 * s**0.5) for s in sizes]) == pytest.approx(0.5)
    assert exponent([(s, 7.0) for s in sizes]) == pytest.approx(0.0)


def test_exponent_needs_two_usable_points() -> None:
    """One point, or points with a zero, give no fit instead of a made-up one."""
    assert math.isnan(exponent([(1000, 5.0)]))
    assert math.isnan(exponent([(1000, 0.0), (10_000, 0.0)]))


def test_targets_are_judged_at_the_largest_size() -> None:
    """Recall against raw search and the batched rate come from the biggest row."""
    small = ScaleRow(
        10_000, namespaces=1000, recall=(1, 2), raw=(1, 1), batched_per_s=50
    )
    big = ScaleRow(
        1_000_000, namespaces=1000, recall=(20, 30), raw=(20, 25), batched_per_s=400
    )
    found = server_targets(ServerRun([ServerRow(small), ServerRow(big)]))
    assert [True, True, True] == [t.met for t in found]
    ratio = found[0]
    assert "1,000,000" in ratio.name
    assert ratio.ratio == pytest.approx((30 / 25) / 1.5)
    assert found[2].met is True


def test_growth_table_prints_a_dash_for_no_fit() -> None:
    """A figure without a fit reads '-', not 'nan'."""
    text = growth_table(ServerRun([], {"recall p95 ms": math.nan, "x": 0.25}))
    assert "| recall p95 ms | - |" in text and "| x | 0.25 |" in text


def test_scale_uri_must_be_a_server(capsys: pytest.CaptureFixture[str]) -> None:
    """`bench scale --uri` with a file path is refused with what to pass instead."""
    code = main(["bench", "scale", "--uri", "./x.db", "--sizes", "10"])
    assert code != 0
    assert "server address" in capsys.readouterr().err


def test_a_tuned_cache_pass_is_reported_beside_the_defaults() -> None:
    """Where the default bound evicted tenants, the tuned pass gets its own rows."""
    from hindsight_lg.bench.server_report import server_summary

    row = ScaleRow(
        1_000_000,
        namespaces=1000,
        recall=(900, 3000),
        raw=(30, 200),
        batched_per_s=150,
        held=((40, 90), (30, 80), 4200.0),
    )
    found = server_targets(ServerRun([ServerRow(row)]))
    names = [t.name for t in found]
    assert [t.met for t in found] == [False, False, True, True, False]
    assert "tuned" not in names[0] and "tuned" in names[2] and "tuned" in names[3]
    assert found[2].ratio == pytest.approx((90 / 80) / 1.5)
    summary = server_summary(ServerRun([ServerRow(row)]))
    assert "| 1,000,000 | 1000 | 40.0 / 90.0 | 30.0 / 80.0 | 1.12 | 4200 |" in summary


def test_with_a_model_capture_and_submit_are_judged_against_it() -> None:
    """With MiniLM each mode is held to 0.8x the model alone, naming its limit."""
    clock = StageClock()
    clock.seconds.update(embed=0.5, reads=0.1)
    row = ScaleRow(10_000, namespaces=1000, recall=(1, 2), raw=(1, 2), capture_per_s=9)
    row.submit_per_s = 20
    row.model_alone = {"capture": 10.0, "submit": 10.0}
    row.stages = {"capture": Stages.of(clock, 10, 1.0)}
    found = server_targets(ServerRun([ServerRow(row)], embedder="minilm"))
    capture, submit = found[2], found[3]
    assert capture.ratio == pytest.approx(0.9 / 0.8) and capture.met is True
    assert "limited by embed" in capture.measured
    assert submit.ratio == pytest.approx(2.0 / 0.8)


def test_stages_name_the_stage_that_sets_the_pace() -> None:
    """The largest stage on the capture's thread limits it, or a saturated commit."""
    clock = StageClock()
    clock.seconds.update(embed=0.1, reads=0.5, write=0.05)
    st = Stages.of(clock, 100, 1.0)
    assert st.ms["encode"] == pytest.approx(3.5)  # 1 s less 0.65 s, per turn
    assert st.limit == "reads"
    clock.seconds["commit"] = 0.9  # behind, nearly the whole wall time
    assert Stages.of(clock, 100, 1.0).limit == "commit"


def test_a_flush_counts_its_writes_once() -> None:
    """The caller's writes inside its final flush are not counted as waiting too."""
    clock = StageClock()
    clock.seconds.update(write=0.2)
    st = Stages.of(clock, 10, 1.0, wait_s=0.5)
    assert st.ms["wait"] == pytest.approx(30.0) and st.ms["write"] == pytest.approx(
        20.0
    )
    assert st.ms["encode"] == pytest.approx(50.0)


def test_a_stage_run_from_many_threads_counts_its_wall_time() -> None:
    """Four writers at once for 0.1 s are 0.1 s of the stage, not 0.4 s."""
    clock = StageClock()

    def write() -> None:
        with clock.timed("write"):
            time.sleep(0.1)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert 0.09 < clock.seconds["write"] < 0.3
