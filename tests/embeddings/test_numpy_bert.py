"""The numpy engine: FlagEmbedding's MiniLM vectors without torch, and the models it takes.

``REFERENCE`` holds FlagEmbedding's vectors of ``REFERENCE_TEXTS`` (mean
pooling, normalised), so the default run checks the numpy engine against the
reference path without importing torch; the slow test compares the two
engines live on a few hundred texts. Rewrite the file after changing the
texts: ``python -m tests.embeddings.test_numpy_bert``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from hindsight_lg.embeddings import FlagEmbeddingEmbedder, minilm_path
from hindsight_lg.embeddings.bert import MAX_TOKENS, NumpyBert, unfit_reason

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).with_name("data") / "minilm_reference.npy"
REFERENCE_TEXTS = [
    "What does Maya think about Redis for caching?",
    "Actually Redis is fine for caching now, we moved to a managed cluster.",
    "我下周三要去上海出差，记得提醒我带伞",
    "",
    "Café naïve résumé: ÀÉÎ, Ελληνικά, кириллица, العربية",
    "emoji 😀🎉 and tabs\tand\nnew lines",
    "mixed 中文 and English 123, https://example.com/a?b=c",
    "I'm Maya, I work as a backend engineer at Lumen Labs in Berlin. " * 60,
]
TOLERANCE = 1e-5


def _packaged() -> Path:
    path = minilm_path()
    assert path is not None, "the offline-model extra is part of the dev setup"
    return Path(path)


def _varied_texts() -> list[str]:
    """A few hundred texts: chat sentences in both languages, long turns, odd input."""
    data = json.loads(
        (ROOT / "scripts" / "data" / "e5_centering.json").read_text(encoding="utf-8")
    )
    english, chinese = data["en"], data["zh"]
    long_turns = [" ".join(english[i : i + 30]) for i in range(0, 160, 30)]
    long_turns += ["".join(chinese[i : i + 40]) for i in range(0, 160, 40)]
    odd = ["", " ", "\x00\x07 control", "ｆｕｌｌｗｉｄｔｈ", "\u200bzero width"]
    odd += ["x" * 3000, "UPPER lower MiXeD", "a", "  spaced   out  "]
    return [*english, *chinese, *long_turns, *odd, *REFERENCE_TEXTS]


def _engines(pooling: str) -> tuple[FlagEmbeddingEmbedder, FlagEmbeddingEmbedder]:
    path = _packaged()
    return (
        FlagEmbeddingEmbedder(path, pooling_method=pooling, engine="numpy"),
        FlagEmbeddingEmbedder(path, pooling_method=pooling, engine="flagembedding"),
    )


@pytest.mark.slow
@pytest.mark.parametrize("pooling", ["mean", "cls"])
def test_numpy_vectors_are_flagembeddings_within_1e_5(pooling: str) -> None:
    """Batched and one by one, the numpy engine's vectors are FlagEmbedding's."""
    ours, reference = _engines(pooling)
    texts = _varied_texts()
    assert len(texts) >= 300
    expected = reference.embed(texts)
    assert float(np.abs(ours.embed(texts) - expected).max()) <= TOLERANCE
    alone = np.vstack([ours.embed([t]) for t in texts[::7]])  # no padding at all
    assert float(np.abs(alone - expected[::7]).max()) <= TOLERANCE


def test_numpy_vectors_match_the_stored_reference() -> None:
    """The numpy engine reproduces FlagEmbedding's stored MiniLM vectors."""
    ours = FlagEmbeddingEmbedder(_packaged(), pooling_method="mean", engine="numpy")
    expected = np.load(REFERENCE)
    assert expected.shape == (len(REFERENCE_TEXTS), 384)
    assert float(np.abs(ours.embed(REFERENCE_TEXTS) - expected).max()) <= TOLERANCE


def test_the_packaged_minilm_runs_in_numpy_on_the_cpu_only() -> None:
    """Auto takes numpy for the packaged MiniLM; a GPU device keeps FlagEmbedding."""
    path = _packaged()
    assert FlagEmbeddingEmbedder(path, pooling_method="mean").engine == "numpy"
    on_gpu = FlagEmbeddingEmbedder(path, pooling_method="mean", device="cuda")
    assert (on_gpu.engine, on_gpu.loaded) == ("flagembedding", False)


def test_an_engine_that_cannot_serve_is_refused_at_construction(tmp_path: Path) -> None:
    """Asking numpy to run a non-BERT model, or naming no engine, fails with the reason."""
    (tmp_path / "config.json").write_text(
        '{"model_type": "xlm-roberta", "hidden_size": 8}'
    )
    with pytest.raises(ValueError, match="numpy engine cannot run"):
        FlagEmbeddingEmbedder(tmp_path, pooling_method="mean", engine="numpy")
    with pytest.raises(ValueError, match="engine must be one of"):
        FlagEmbeddingEmbedder(_packaged(), engine="onnx")


def _copy_of_packaged(folder: Path) -> Path:
    """The packaged model's small files copied, its weights linked."""
    source = _packaged()
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json"):
        shutil.copy(source / name, folder / name)
    (folder / "model.safetensors").symlink_to(source / "model.safetensors")
    return folder


@pytest.mark.parametrize(
    ("file", "change", "reason"),
    [
        ("config.json", {"model_type": "xlm-roberta"}, "model_type"),
        ("config.json", {"hidden_act": "gelu_new"}, "hidden_act"),
        ("config.json", {"position_embedding_type": "relative_key"}, "position"),
        ("config.json", {"max_position_embeddings": 128}, "positions"),
        ("tokenizer_config.json", {"do_lower_case": False}, "lowercase"),
        ("tokenizer_config.json", {"tokenizer_class": "XLMRobertaTokenizer"}, "class"),
    ],
)
def test_models_the_numpy_engine_would_compute_differently_are_left_out(
    tmp_path: Path, file: str, change: dict[str, object], reason: str
) -> None:
    """Another architecture, activation, position scheme or tokenizer setting is unfit."""
    folder = _copy_of_packaged(tmp_path)
    assert unfit_reason(folder, "mean") is None
    config = json.loads((folder / file).read_text(encoding="utf-8"))
    (folder / file).write_text(json.dumps({**config, **change}), encoding="utf-8")
    found = unfit_reason(folder, "mean")
    assert found is not None and reason in found


def test_an_unknown_pooling_or_missing_weights_are_unfit(tmp_path: Path) -> None:
    """Only mean and cls pooling over safetensors weights are computed here."""
    folder = _copy_of_packaged(tmp_path)
    assert "pooling" in (unfit_reason(folder, "last") or "")
    (folder / "model.safetensors").unlink()
    assert "model.safetensors" in (unfit_reason(folder, "mean") or "")


def test_a_long_text_is_cut_to_512_tokens_as_flagembedding_cuts_it() -> None:
    """Tokens past the limit are dropped and the sequence still ends with [SEP]."""
    ids = NumpyBert(_packaged()).token_ids(["word " * 2000, "short"])
    assert len(ids[0]) == MAX_TOKENS and ids[0][-1] == ids[1][-1] == 102


def _write_reference() -> None:
    """Embed ``REFERENCE_TEXTS`` through FlagEmbedding and store the vectors."""
    path = _packaged()
    reference = FlagEmbeddingEmbedder(
        path, pooling_method="mean", engine="flagembedding"
    )
    REFERENCE.parent.mkdir(exist_ok=True)
    np.save(REFERENCE, reference.embed(REFERENCE_TEXTS).astype(np.float32))


if __name__ == "__main__":
    _write_reference()
