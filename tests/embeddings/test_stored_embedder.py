"""Which embedder a store's recorded model id names, and a stand-in when it is missing."""

from __future__ import annotations

import pytest

from hindsight_lg.embeddings import (
    MINILM_ID,
    FlagEmbeddingEmbedder,
    HashingEmbedder,
    UnavailableEmbedder,
    embedder_from_name,
    minilm_path,
    stored_embedder,
)
from hindsight_lg.errors import ModelNotAvailable


@pytest.mark.parametrize(
    ("name", "dim", "ngram"),
    [("hashing", 384, 3), ("hashing-128", 128, 3), ("hashing-64-4", 64, 4)],
)
def test_hashing_names_and_recorded_ids_build_that_hashing_embedder(
    name: str, dim: int, ngram: int
) -> None:
    """``hashing``, ``hashing-DIM`` and the recorded ``hashing-DIM-NGRAM`` agree."""
    built = embedder_from_name(name)
    assert isinstance(built, HashingEmbedder)
    assert (dim, ngram, f"hashing-{dim}-{ngram}") == (
        built.dim,
        built.ngram,
        built.model_id,
    )


def test_a_recorded_hashing_id_round_trips() -> None:
    """The id a hashing store records builds an embedder with the same vectors."""
    original = HashingEmbedder(dim=96, ngram=2)
    adopted = stored_embedder(original.model_id, original.dim)
    assert original.model_id == adopted.model_id
    assert (
        original.embed(["green tea"]).tolist() == adopted.embed(["green tea"]).tolist()
    )


@pytest.mark.skipif(minilm_path() is None, reason="needs hindsight-lg[offline-model]")
def test_the_recorded_minilm_id_builds_the_packaged_model_without_loading_it() -> None:
    """A MiniLM store's id is the packaged MiniLM, still unloaded."""
    adopted = stored_embedder(MINILM_ID, 384)
    assert (MINILM_ID, 384) == (adopted.model_id, adopted.dim)
    assert isinstance(adopted, FlagEmbeddingEmbedder)
    assert adopted.loaded is False


def test_a_recorded_model_this_machine_lacks_is_a_stand_in() -> None:
    """The stand-in keeps the id and dim; embedding raises, naming the model."""
    adopted = stored_embedder("acme/not-here", 16)
    assert isinstance(adopted, UnavailableEmbedder)
    assert ("acme/not-here", 16) == (adopted.model_id, adopted.dim)
    with pytest.raises(ModelNotAvailable) as raised:
        adopted.embed(["tea"])
    message = str(raised.value)
    assert "acme/not-here (dim 16)" in message
    assert "--embedder" in message and "reembed" in message
    assert "\n" not in message  # the CLI prints one line
