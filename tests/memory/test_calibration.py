"""The packaged models' calibration ships with the package and matches a fresh one.

Recall's floors come from a measurement on the embedder (64 texts, about a
second for the packaged MiniLM + e5 pair, half of a ``hindsight-lg recall``
start). The packaged models' figures ship in ``_calibrated.py`` and are used
for their exact model ids only; these tests re-measure them, so a change to
the calibration texts or to a model fails here with the command that rewrites
them.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hindsight_lg.embeddings import BILINGUAL_ID, E5_ID, MINILM_ID
from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.memory.recall import calibration
from hindsight_lg.memory.recall._calibrated import SPREADS
from hindsight_lg.memory.recall.calibration import (
    REGENERATE,
    Spread,
    measure_shipped,
    shipped,
    spread_of,
)
from hindsight_lg.testing import HashingEmbedder

REWRITE = (
    "the shipped calibration no longer matches the packaged models (the "
    "calibration texts, a model or a model id changed): rewrite it with "
    f"`OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 {REGENERATE}` and commit "
    "hindsight_lg/memory/recall/_calibrated.py"
)


#: How far two CPUs' measurements of one model may differ (see below).
CPU_NOISE = 1e-3


class _Unmeasurable:
    """An embedder that fails the test if anything is embedded with it."""

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.dim = 384

    def embed(self, texts: Sequence[str]) -> Vectors:
        raise AssertionError(f"{self.model_id} was measured, not read")


@pytest.fixture
def fresh_memo(monkeypatch: pytest.MonkeyPatch) -> dict[str, Spread]:
    """An empty per-process memo, so spread_of cannot answer from an earlier test."""
    memo: dict[str, Spread] = {}
    monkeypatch.setattr(calibration, "_MEASURED", memo)
    return memo


def test_the_packaged_model_ids_are_the_ones_shipped() -> None:
    """MiniLM, e5 and the pair default_embedder() builds from them are the ones shipped."""
    assert sorted([BILINGUAL_ID, E5_ID, MINILM_ID]) == sorted(SPREADS), REWRITE


def test_shipped_spreads_equal_a_fresh_measurement() -> None:
    """Each shipped spread is what measuring its packaged model gives today."""
    measured = {i: s.unrelated for i, s in measure_shipped().items()}

    assert sorted(SPREADS) == sorted(measured), REWRITE
    # The e5 port's C engine does not give the same arithmetic on every CPU:
    # its figures came out up to 2e-4 apart on two x86 machines (MiniLM's
    # matched). A changed text or model moves a figure by 2e-3 or more.
    assert _flat(SPREADS) == pytest.approx(_flat(measured), abs=CPU_NOISE), REWRITE


def _flat(spreads: dict[str, dict[str, tuple[float, float]]]) -> dict[str, float]:
    """``{"<model id> <key> mu": ..., "... sigma": ...}``: approx compares no nesting."""
    return {
        f"{model_id} {key} {name}": value
        for model_id, unrelated in spreads.items()
        for key, pair in unrelated.items()
        for name, value in zip(("mu", "sigma"), pair, strict=True)
    }


def test_a_packaged_model_is_read_not_measured(fresh_memo: dict[str, Spread]) -> None:
    """spread_of answers a packaged model id from the shipped figures, embedding nothing."""
    spread = spread_of(_Unmeasurable(BILINGUAL_ID))

    assert Spread(BILINGUAL_ID, SPREADS[BILINGUAL_ID]) == spread
    assert {BILINGUAL_ID: spread} == fresh_memo


def test_only_an_exact_model_id_is_read() -> None:
    """A model id that differs in a version tag or a part gets no shipped figures."""
    assert shipped(E5_ID.replace("centred-1", "centred-2")) is None
    assert shipped(f"{MINILM_ID}+hashing-384-3") is None
    assert shipped(MINILM_ID.upper()) is None


def test_any_other_model_is_measured(fresh_memo: dict[str, Spread]) -> None:
    """An embedder with no shipped figures is measured, once per model id."""
    embedder = HashingEmbedder(64)

    spread = spread_of(embedder)

    assert calibration.measure(embedder) == spread
    assert spread is spread_of(HashingEmbedder(64))


def test_shipped_figures_are_not_shared_for_mutation() -> None:
    """A Spread read from the shipped table is a copy: changing it leaves the table."""
    spread = shipped(MINILM_ID)
    assert spread is not None

    spread.unrelated["latin"] = (9.0, 9.0)

    assert (9.0, 9.0) != SPREADS[MINILM_ID]["latin"]
