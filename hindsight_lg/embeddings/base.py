"""The protocols users implement to bring their own embedding and reranking models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from hindsight_lg.errors import ModelNotAvailable

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised dense vectors.

    ``model_id`` and ``dim`` are stored with the collection so a change of
    model is detected instead of silently mixing vector spaces.
    """

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts`` as an array of shape ``(len(texts), dim)``."""
        ...


@runtime_checkable
class QueryEmbedder(Embedder, Protocol):
    """An :class:`Embedder` that embeds questions apart from what they search.

    Models trained with asymmetric prefixes (e5's ``"query: "`` and
    ``"passage: "``) place a question nearer its answer when the two are
    embedded differently. ``embed`` embeds what is stored; recall embeds its
    queries with ``embed_queries`` (:func:`embed_queries`).
    """

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Embed search queries as an array of shape ``(len(texts), dim)``."""
        ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> Vectors:
    """``texts`` embedded as queries: ``embed_queries`` where the model has it."""
    if isinstance(embedder, QueryEmbedder):
        return embedder.embed_queries(texts)
    return embedder.embed(texts)


class QueriesOf:
    """The :class:`Embedder` whose ``embed`` embeds queries with ``inner``.

    Recall's search embeds nothing but queries; handing it this view keeps
    the query/passage choice in one place.

    Example:
        >>> from hindsight_lg.embeddings.hashing import HashingEmbedder
        >>> QueriesOf(HashingEmbedder(16)).embed(["where?"]).shape
        (1, 16)
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim

    def embed(self, texts: Sequence[str]) -> Vectors:
        """``texts`` embedded as queries."""
        return embed_queries(self.inner, texts)


@runtime_checkable
class Reranker(Protocol):
    """Scores (query, passage) pairs; higher is more relevant."""

    model_id: str

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance of each passage to ``query``, in the passages' order."""
        ...


def normalize(vectors: npt.ArrayLike) -> Vectors:
    """L2-normalise rows; zero rows stay zero."""
    arr = np.asarray(vectors, dtype=np.float32)
    if arr.ndim == 1:
        arr = arr[None, :]
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out: Vectors = arr / norms
    return out


class UnavailableEmbedder:
    """Stands in for a store's recorded model that is not on this machine.

    It carries the ``model_id`` and ``dim`` the store records, so memory opens
    and serves everything that embeds nothing (listing, stats, export, restore,
    forget); the first text to embed raises :class:`ModelNotAvailable` with
    ``reason``, which names the model and how to provide it.

    Example:
        >>> e = UnavailableEmbedder("acme/model", 16, "acme/model is not here")
        >>> (e.model_id, e.dim)
        ('acme/model', 16)
    """

    def __init__(self, model_id: str, dim: int, reason: str) -> None:
        self.model_id = model_id
        self.dim = dim
        self.reason = reason

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Raise: the model is not available.

        Raises:
            ModelNotAvailable: always, with :attr:`reason`.
        """
        raise ModelNotAvailable(self.reason)
