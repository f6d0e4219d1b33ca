"""A FlagEmbedding model loads on the first embed, not when the embedder is built."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hindsight_lg.embeddings import FlagEmbeddingEmbedder, minilm_path
from hindsight_lg.embeddings.flag import config_dim


def test_an_embedder_is_built_without_its_model(
    minilm: FlagEmbeddingEmbedder,
) -> None:
    """A new embedder knows its dimension from config.json before loading anything."""
    path = minilm_path()
    assert path is not None
    fresh = FlagEmbeddingEmbedder(path, pooling_method="mean")
    assert (fresh.loaded, fresh.dim) == (False, 384)
    assert minilm.embed(["green tea"]).shape == (1, fresh.dim)
    assert minilm.loaded


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"hidden_size": 1024}, 1024),
        ({"d_model": 512}, 512),
        ({"hidden_size": "wide"}, None),
        ([], None),
    ],
)
def test_config_dim_reads_the_encoder_width(
    tmp_path: Path, config: object, expected: int | None
) -> None:
    """The width comes from hidden_size or d_model; anything else says nothing."""
    (tmp_path / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert config_dim(tmp_path) == expected


def test_config_dim_of_a_directory_without_config_is_none(tmp_path: Path) -> None:
    """No config.json: the embedder falls back to a probe embedding."""
    assert config_dim(tmp_path) is None
