"""Forward passes group texts of similar length, so padding stays bounded."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from hindsight_lg.embeddings.batches import _PAD_SLACK, length_batches


def test_a_whole_turn_does_not_pad_its_sentences() -> None:
    """A 512-token turn shares its pass with one sentence at most, not fifty."""
    lengths = [18 + i % 7 for i in range(50)] + [512]
    batches = length_batches(lengths, batch_size=64)
    with_turn = next(b for b in batches if 50 in b)
    assert len(with_turn) <= 2
    padded = sum(max(lengths[i] for i in b) * len(b) for b in batches)
    assert padded <= 2 * sum(lengths)


@given(
    st.lists(st.integers(min_value=1, max_value=512), max_size=200),
    st.integers(min_value=1, max_value=64),
)
def test_every_text_once_in_full_batches_of_bounded_padding(
    lengths: list[int], batch_size: int
) -> None:
    """Each index appears once; no pass exceeds its size or wastes a quarter."""
    batches = length_batches(lengths, batch_size)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch) <= batch_size
        real = sum(lengths[i] for i in batch)
        padding = max(lengths[i] for i in batch) * len(batch) - real
        assert 4 * padding <= real or padding <= _PAD_SLACK
