"""An engine given no embedder opens a store with the model the store records."""

from __future__ import annotations

from pathlib import Path

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.embeddings import UnavailableEmbedder
from hindsight_lg.errors import EmbeddingMismatch, ModelNotAvailable
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

MISSING_MODEL = "acme/embedder-not-on-this-machine"


class _ElsewhereEmbedder(HashingEmbedder):
    """A model this machine does not have: only the process that wrote had it."""

    def __init__(self) -> None:
        super().__init__(dim=32)
        self.model_id = MISSING_MODEL


def _write(uri: str, embedder: HashingEmbedder, text: str = "I like green tea") -> None:
    with HindsightMemory.from_uri(uri, embedder=embedder) as memory:
        memory.capture(text, namespace="u1")


def test_from_uri_without_embedder_adopts_the_store_s_model(tmp_path: Path) -> None:
    """A store written with hashing-64 reopens with hashing-64 and recalls."""
    uri = str(tmp_path / "m.db")
    _write(uri, HashingEmbedder(dim=64))
    with HindsightMemory.from_uri(uri) as memory:
        assert ("hashing-64-3", 64) == (memory.embedder.model_id, memory.embedder.dim)
        found = memory.recall("green tea", namespace="u1", timeout=None)
    assert ["I like green tea"] == [r.content for r in found.records]


def test_a_new_store_gets_the_default_embedder(tmp_path: Path) -> None:
    """Nothing recorded yet: the default choice, as before."""
    from hindsight_lg.embeddings import default_embedder

    uri = str(tmp_path / "new.db")
    with HindsightMemory.from_uri(uri, warm_up=False) as memory:
        assert default_embedder().model_id == memory.embedder.model_id


def test_an_embedder_given_that_disagrees_is_refused(tmp_path: Path) -> None:
    """An explicit embedder other than the store's is the mismatch error."""
    uri = str(tmp_path / "m.db")
    _write(uri, HashingEmbedder(dim=64))
    with pytest.raises(EmbeddingMismatch, match="hashing-64-3"):
        HindsightMemory.from_uri(uri, embedder=HashingEmbedder(dim=128))


def test_a_hand_built_engine_adopts_its_backend_s_model() -> None:
    """HindsightMemory(backend) over a backend holding vectors uses their model."""
    backend = InMemoryBackend()
    with HindsightMemory(backend, HashingEmbedder(dim=48)) as first:
        first.capture("I like green tea", namespace="u1")
    with HindsightMemory(backend) as again:
        assert "hashing-48-3" == again.embedder.model_id


def test_a_missing_model_opens_for_work_that_embeds_nothing(tmp_path: Path) -> None:
    """Without warm-up, memory opens and lists; the first recall names the model."""
    uri = str(tmp_path / "m.db")
    _write(uri, _ElsewhereEmbedder())
    with HindsightMemory.from_uri(uri, warm_up=False) as memory:
        assert isinstance(memory.embedder, UnavailableEmbedder)
        assert ["I like green tea"] == [r.content for r in memory.list_memories("u1")]
        with pytest.raises(ModelNotAvailable, match=MISSING_MODEL):
            memory.recall("tea", namespace="u1", timeout=None)


def test_a_missing_model_fails_the_warm_up_and_leaves_nothing_open(
    tmp_path: Path,
) -> None:
    """from_uri with warm-up raises at once and lets go of the Lite file."""
    uri = str(tmp_path / "m.db")
    _write(uri, _ElsewhereEmbedder())
    with pytest.raises(ModelNotAvailable, match="--embedder"):
        HindsightMemory.from_uri(uri)
    with HindsightMemory.from_uri(uri, embedder=_ElsewhereEmbedder()) as memory:
        assert 1 == len(memory.list_memories("u1"))


def test_a_capture_made_without_the_model_waits_in_the_spool(tmp_path: Path) -> None:
    """It is kept (not dead-lettered) and lands once memory opens with the model."""
    uri = str(tmp_path / "m.db")
    _write(uri, _ElsewhereEmbedder())
    with HindsightMemory.from_uri(uri, warm_up=False) as memory:
        assert [] == memory.capture("My sister Anna lives in Lisbon", namespace="u1")
    spool = Path(uri + ".spool")
    assert not any(p.name.endswith(".dead") for p in spool.parent.iterdir())
    with HindsightMemory.from_uri(uri, embedder=_ElsewhereEmbedder()) as memory:
        contents = {r.content for r in memory.list_memories("u1")}
    assert {"I like green tea", "My sister Anna lives in Lisbon"} == contents
