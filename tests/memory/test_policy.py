"""The policy object holds the design's seed values, all overridable."""

from __future__ import annotations

import pytest

from hindsight_lg import Kind, Policy


@pytest.mark.parametrize(
    ("kind", "half_life", "importance"),
    [
        (Kind.PREFERENCE, 90.0, 0.8),
        (Kind.TASK, 30.0, 0.7),
        (Kind.FACT, 14.0, 0.5),
        (Kind.QUERY, 1.0, 0.2),
        (Kind.RULE, 700.0, 0.9),
    ],
)
def test_design_seed_values(kind: Kind, half_life: float, importance: float) -> None:
    """Half-lives and initial importance follow the design's table."""
    policy = Policy()
    assert (half_life, importance) == (policy.half_life(kind), policy.importance(kind))


def test_every_kind_has_a_half_life_and_importance() -> None:
    """No kind falls through to the generic fallback."""
    policy = Policy()
    assert set(Kind) == set(policy.half_life_days) == set(policy.initial_importance)


def test_score_weights_are_the_design_formula() -> None:
    """0.4 similarity + 0.2 recency + 0.25 importance + 0.15 graph."""
    expected = {"similarity": 0.4, "recency": 0.2, "importance": 0.25, "graph": 0.15}
    assert expected == Policy().score_weights


def test_thresholds() -> None:
    """Merge at cosine 0.92, promote from salience 0.3, superseded importance 0.1."""
    p = Policy()
    assert (0.92, 0.3, 0.1) == (
        p.merge_threshold,
        p.min_salience,
        p.superseded_importance,
    )


def test_policies_do_not_share_tables() -> None:
    """Changing one policy's table leaves new policies at the defaults."""
    tuned = Policy()
    tuned.half_life_days[Kind.FACT] = 3.0
    assert 14.0 == Policy().half_life(Kind.FACT)


def test_kind_given_as_string() -> None:
    """Lookups accept a kind's string value."""
    assert 90.0 == Policy().half_life("preference")  # type: ignore[arg-type]
