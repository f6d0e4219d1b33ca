"""A disk cache in front of an embedder, so benchmark iterations skip the model."""

from __future__ import annotations

import hashlib
import io
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hindsight_lg._files import make_dirs, replace_private
from hindsight_lg.embeddings import Embedder, Vectors, embed_queries


class CachedEmbedder:
    """Wraps an embedder; vectors are keyed by a hash of the text and kept on disk.

    The wrapped model's ``model_id`` and ``dim`` are passed through, so a
    store built with the cache is indistinguishable from one built without.

    Example:
        >>> from hindsight_lg.embeddings import HashingEmbedder
        >>> cached = CachedEmbedder(HashingEmbedder(), None)
        >>> cached.embed(["tea"]).shape == (1, cached.dim)
        True
    """

    def __init__(self, inner: Embedder, folder: Path | None) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dim = inner.dim
        slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", inner.model_id)[-80:]
        self.path = folder / f"embeddings-{slug}.npz" if folder else None
        self._vectors: dict[str, np.ndarray] = {}
        self._dirty = False
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        with np.load(path) as data:
            keys, vectors = data["keys"], data["vectors"]
        if vectors.ndim == 2 and vectors.shape[1] == self.dim:
            self._vectors = {str(k): v for k, v in zip(keys, vectors, strict=True)}

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``; only texts never seen before reach the model."""
        return self._cached(texts, query=False)

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        """Query vectors for ``texts`` (kept apart from the stored texts' ones)."""
        return self._cached(texts, query=True)

    def _cached(self, texts: Sequence[str], *, query: bool) -> Vectors:
        side = "query:" if query else ""
        keys = [hashlib.sha1((side + t).encode("utf-8")).hexdigest() for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._vectors))
        if missing:
            by_key = dict(zip(keys, texts, strict=True))
            batch = [by_key[k] for k in missing]
            fresh = (
                embed_queries(self.inner, batch) if query else self.inner.embed(batch)
            )
            for key, vector in zip(missing, fresh, strict=True):
                self._vectors[key] = np.asarray(vector, dtype=np.float32)
            self._dirty = True
        out: Vectors = np.stack([self._vectors[k] for k in keys]).astype(np.float32)
        return out

    def warm(self, texts: Sequence[str], batch: int = 64) -> None:
        """Embed unseen ``texts`` in large batches ahead of one-at-a-time calls."""
        for start in range(0, len(texts), batch):
            self.embed(texts[start : start + batch])

    def save(self) -> None:
        """Write new vectors to disk (no-op without a folder or new vectors)."""
        if self.path is None or not self._dirty or not self._vectors:
            return
        keys = np.array(list(self._vectors))
        vectors = np.stack(list(self._vectors.values()))
        data = io.BytesIO()
        np.savez(data, keys=keys, vectors=vectors)
        # Two runs may share the cache folder: each rewrite is atomic, 0600.
        make_dirs(self.path.parent)
        replace_private(self.path, data.getvalue())
        self._dirty = False
