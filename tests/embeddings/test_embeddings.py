"""Embedders: hashing determinism, the packaged MiniLM, fast failure, default order."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hindsight_lg import embeddings
from hindsight_lg.embeddings import (
    Embedder,
    FlagEmbeddingEmbedder,
    HashingEmbedder,
    default_embedder,
    embedder_from_name,
    resolve_model_path,
)
from hindsight_lg.errors import ModelNotAvailable


def test_hashing_is_deterministic_and_normalised() -> None:
    """The same text gives the same unit vector in every instance."""
    a = HashingEmbedder().embed(["I like tea", "我喜欢喝茶"])
    b = HashingEmbedder().embed(["I like tea", "我喜欢喝茶"])
    np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), [1.0, 1.0], rtol=1e-5)
    assert (2, 384) == a.shape


def test_hashing_places_shared_words_closer() -> None:
    """Texts sharing words (Chinese included) are closer than unrelated ones."""
    v = HashingEmbedder().embed(
        ["我下周三要去上海出差", "去上海出差的安排", "I love hiking", "redis caching"]
    )
    assert v[0] @ v[1] > v[0] @ v[2]
    assert v[2] @ v[2] > v[2] @ v[3]


def test_hashing_embeds_empty_text_as_zero() -> None:
    """Empty text has no features, so its vector is all zeros, not NaN."""
    assert 0.0 == float(np.abs(HashingEmbedder(dim=16).embed([""])).sum())


def test_hashing_refuses_tiny_dimensions() -> None:
    """A dimension under 8 is a caller error."""
    with pytest.raises(ValueError):
        HashingEmbedder(dim=4)


def test_hashing_satisfies_the_protocol() -> None:
    """The hashing embedder is a runtime-checkable Embedder."""
    assert isinstance(HashingEmbedder(), Embedder)


@pytest.mark.slow
def test_minilm_is_384_normalised_and_semantic(minilm: FlagEmbeddingEmbedder) -> None:
    """The packaged MiniLM gives unit 384-d vectors that place paraphrases closer."""
    v = minilm.embed(
        [
            "I prefer green tea over coffee",
            "What hot drink does the user like?",
            "The server crashed during deployment",
        ]
    )
    assert isinstance(minilm, Embedder)
    assert (3, 384) == v.shape == (3, minilm.dim)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), [1.0] * 3, rtol=1e-4)
    assert v[0] @ v[1] > v[0] @ v[2]
    assert embeddings.MINILM_ID == minilm.model_id
    assert (0, 384) == minilm.embed([]).shape


def test_uncached_hub_model_fails_at_once_naming_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An uncached hub id raises ModelNotAvailable naming the remedies, no network."""
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelNotAvailable) as info:
        resolve_model_path("BAAI/bge-m3")
    message = str(info.value)
    assert "huggingface-cli download BAAI/bge-m3" in message
    assert "offline-model" in message
    assert not embeddings.is_cached("BAAI/bge-m3")


def test_local_directory_resolves_to_itself(tmp_path: Path) -> None:
    """A local model directory is used as is."""
    assert tmp_path == resolve_model_path(tmp_path)


def test_default_prefers_an_explicit_choice() -> None:
    """An explicit embedder or name wins over anything installed."""
    mine = HashingEmbedder(dim=32)
    assert mine is default_embedder(mine)
    assert "hashing-384-3" == default_embedder("hashing").model_id


def test_default_takes_cached_bge_m3_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """With bge-m3 in the cache, the default is bge-m3."""
    built: list[str] = []
    monkeypatch.setattr(embeddings, "_flag_installed", lambda: True)
    monkeypatch.setattr(embeddings, "is_cached", lambda name: True)
    monkeypatch.setattr(
        embeddings, "FlagEmbeddingEmbedder", lambda name: built.append(name) or name
    )
    assert "BAAI/bge-m3" == default_embedder()
    assert ["BAAI/bge-m3"] == built


def test_default_takes_minilm_and_e5_together_second(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without bge-m3 but with the offline-model extra, MiniLM and e5 serve together."""
    monkeypatch.setattr(embeddings, "_flag_installed", lambda: True)
    monkeypatch.setattr(embeddings, "is_cached", lambda name: False)
    monkeypatch.setattr(embeddings, "minilm_path", lambda: "/models/minilm")
    monkeypatch.setattr(embeddings, "minilm_embedder", lambda: HashingEmbedder(8))
    monkeypatch.setattr(embeddings, "e5_installed", lambda: True)
    chosen = default_embedder()
    assert isinstance(chosen, embeddings.BilingualEmbedder)
    assert f"hashing-8-3+{embeddings.E5_ID}" == chosen.model_id


@pytest.mark.parametrize(
    ("minilm", "e5", "expected"),
    [(False, True, "e5"), (True, False, "minilm")],
)
def test_default_takes_whichever_packaged_model_is_installed(
    monkeypatch: pytest.MonkeyPatch, minilm: bool, e5: bool, expected: str
) -> None:
    """With only one of the two packaged models installed, that one is the default."""
    monkeypatch.setattr(embeddings, "_flag_installed", lambda: True)
    monkeypatch.setattr(embeddings, "is_cached", lambda name: False)
    monkeypatch.setattr(embeddings, "minilm_path", lambda: "/m" if minilm else None)
    monkeypatch.setattr(embeddings, "minilm_embedder", lambda: HashingEmbedder(8))
    monkeypatch.setattr(embeddings, "e5_installed", lambda: e5)
    ids = {"e5": embeddings.E5_ID, "minilm": "hashing-8-3"}
    assert ids[expected] == default_embedder().model_id


def test_default_falls_back_to_hashing_with_a_warning(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With no model at all, hashing is used and a visible warning says so."""
    monkeypatch.setattr(embeddings, "_flag_installed", lambda: False)
    monkeypatch.setattr(embeddings, "tokenizers_installed", lambda: False)
    monkeypatch.setattr(embeddings, "e5_installed", lambda: False)
    with pytest.warns(UserWarning, match="hashing embedder") as record:
        chosen = default_embedder()
    assert isinstance(chosen, HashingEmbedder)
    assert "hindsight-lg[bge,offline-model]" in str(record[0].message)


def test_minilm_serves_without_flagembedding_when_numpy_can_run_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without FlagEmbedding the packaged MiniLM is still the default's English half."""
    monkeypatch.setattr(embeddings, "_flag_installed", lambda: False)
    monkeypatch.setattr(embeddings, "is_cached", lambda name: False)
    chosen = default_embedder()
    assert isinstance(chosen, embeddings.BilingualEmbedder)
    assert embeddings.BILINGUAL_ID == chosen.model_id
    assert isinstance(chosen.english, FlagEmbeddingEmbedder)
    assert (chosen.english.engine, chosen.english.loaded) == ("numpy", False)


def test_unknown_name_is_treated_as_a_model_path_and_fails_fast() -> None:
    """A name that is neither a shortcut nor a directory fails without a download."""
    with pytest.raises(ModelNotAvailable):
        embedder_from_name("no-such-org/no-such-model")


def test_import_does_not_load_torch_or_flagembedding() -> None:
    """``import hindsight_lg`` stays light: torch and FlagEmbedding load lazily."""
    code = (
        "import sys, hindsight_lg, hindsight_lg.memory, hindsight_lg.store; "
        "print(sorted(m for m in ('torch', 'FlagEmbedding', 'transformers') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "[]" == out.strip()


@pytest.mark.slow
def test_minilm_embeddings_match_flagembedding_encode() -> None:
    """The FlagEmbedding engine's own batching gives FlagModel.encode's vectors, in order."""
    from hindsight_lg.embeddings.base import normalize

    path = embeddings.minilm_path()
    assert path is not None
    minilm = FlagEmbeddingEmbedder(path, pooling_method="mean", engine="flagembedding")
    texts = ["short", "a much longer sentence about a wedding in Lisbon in June"] * 3
    texts += [f"note number {i} about hiking" for i in range(70)]
    ours = minilm.embed(texts)
    reference = normalize(minilm._model.encode(texts))
    assert ours.shape == (len(texts), 384)
    assert float(abs(ours - reference).max()) < 1e-5
