"""A BERT encoder's forward pass in numpy: the packaged MiniLM without torch.

Loading all-MiniLM-L6-v2 through FlagEmbedding imports torch and transformers
first, about 6 s before the first vector; ``hindsight-lg list`` takes about
1 s in all. A command that embeds one query (``recall``) paid that import
for a model of six small layers. This module reads the same weights
(``model.safetensors``, parsed here: a JSON header and raw arrays) and the
same tokenizer (``tokenizer.json`` through the ``tokenizers`` package, which
transformers itself uses), and runs the same arithmetic in float32, so it
gives FlagEmbedding's vectors (within 4e-7 on unit vectors, measured on 347
texts of both languages, 512-token ones included) after about 0.1 s of
loading.

It serves what FlagEmbedding would run as a plain BERT encoder
(:func:`unfit_reason` says why a directory does not fit; the caller then
uses FlagEmbedding). Batching follows :func:`length_batches`, as the
FlagEmbedding path does. Attention runs a block of (sequence, head) pairs at
a time, so a batch of long texts never holds a gigabyte of scores.

On one core it embeds batches of 32 at about 0.8x torch's speed (OpenBLAS
against torch's MKL: the matrix products are most of the work), one query
about as fast (9 ms), and a capture turn at 0.95x: what it saves is the 6 s
import (and torch's few hundred MB), paid by every process that embeds.
"""

from __future__ import annotations

import importlib.util
import json
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hindsight_lg.embeddings.base import Vectors
from hindsight_lg.embeddings.batches import length_batches

Array = npt.NDArray[np.float32]
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
#: FlagEmbedding's default ``passage_max_length``: texts are cut to it.
MAX_TOKENS = 512
POOLINGS = ("mean", "cls")
# Attention scores held at once, in floats (1 MB): bounds a batch's memory,
# and a block that stays in cache softmaxes several times faster.
_SCORES_BUDGET = 256 * 1024
# Rows of the feed-forward layer computed at once: its 4x wide intermediate
# stays in cache-sized buffers reused across rows instead of a fresh array.
_FFN_ROWS = 256
# Rows per GELU pass: its four buffers (x, two scratch, out) stay in L2.
_GELU_ROWS = 32
# Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7), the erf torch's CPU GELU
# computes; |x| is clipped at 4, where erf is 1 in float32, so exp never
# reaches the denormals that make it 10x slower.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(
    np.float32(a)
    for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)
_SQRT_HALF = np.float32(0.7071067811865476)
_ERF_CLIP = np.float32(4.0)
_MASKED = np.float32(-1e30)  # added to the scores of padding: exp gives 0


def tokenizers_installed() -> bool:
    """Whether the ``tokenizers`` package is importable (without importing it)."""
    return importlib.util.find_spec("tokenizers") is not None


def read_safetensors(path: Path) -> dict[str, Array]:
    """The float32 tensors of a ``.safetensors`` file, mapped, not copied.

    The format is an 8-byte little-endian header length, a JSON header
    (name -> dtype, shape, byte offsets) and the raw data: reading it here
    spares importing the ``safetensors`` package. Tensors of other dtypes
    (``position_ids``, int64) are left out.
    """
    with path.open("rb") as handle:
        (size,) = struct.unpack("<Q", handle.read(8))
        header = json.loads(handle.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors: dict[str, Array] = {}
    for name, spec in header.items():
        if name == "__metadata__" or spec["dtype"] != "F32":
            continue
        start, end = spec["data_offsets"]
        flat = np.frombuffer(data[start:end], dtype="<f4")
        tensors[name] = flat.reshape(spec["shape"]).astype(np.float32, copy=False)
    return tensors


def _json(path: Path) -> dict[str, Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded if isinstance(loaded, dict) else {}


# Each key: the value computed here, and BertConfig's default when absent.
_BERT_CONFIG = {
    "model_type": ("bert", None),
    "hidden_act": ("gelu", "gelu"),
    "position_embedding_type": ("absolute", "absolute"),
}


def _config_reason(config: dict[str, Any]) -> str | None:
    """Why ``config.json`` is not a BERT encoder this module computes exactly."""
    for key, (wanted, default) in _BERT_CONFIG.items():
        value = config.get(key, default)
        if value != wanted:
            return f"config {key} is {value!r}, not {wanted!r}"
    if int(config.get("max_position_embeddings", 0)) < MAX_TOKENS:
        return f"fewer than {MAX_TOKENS} positions"
    return None


def _tokenizer_reason(path: Path) -> str | None:
    """Why transformers would tokenize differently from ``tokenizer.json``, if so.

    transformers' BertTokenizerFast rebuilds the normalizer when
    ``tokenizer_config.json`` disagrees with it (lower case, accents, Chinese
    characters); such a directory is left to FlagEmbedding.
    """
    config = _json(path / "tokenizer_config.json")
    if config.get("tokenizer_class", "BertTokenizer") not in (
        "BertTokenizer",
        "BertTokenizerFast",
    ):
        return f"tokenizer class {config.get('tokenizer_class')!r}"
    normalizer = _json(path / TOKENIZER).get("normalizer") or {}
    if normalizer.get("type") != "BertNormalizer":
        return "tokenizer.json has no BertNormalizer"
    wanted = {
        "lowercase": config.get("do_lower_case", True),
        "strip_accents": config.get("strip_accents"),
        "handle_chinese_chars": config.get("tokenize_chinese_chars", True),
    }
    for key, value in wanted.items():
        if normalizer.get(key, value) != value:
            return f"tokenizer_config.json overrides the normalizer's {key}"
    return None


def unfit_reason(path: Path, pooling: str) -> str | None:
    """Why :class:`NumpyBert` cannot stand in for FlagEmbedding here, or ``None``.

    It can for a BERT encoder (exact GELU, absolute positions) with float32
    safetensors weights and a ``tokenizer.json`` that transformers would use
    as it is, pooled by ``mean`` or ``cls``, when ``tokenizers`` is installed.
    """
    if pooling not in POOLINGS:
        return f"pooling {pooling!r}"
    if not tokenizers_installed():
        return "the tokenizers package is not installed"
    if not (path / WEIGHTS).is_file() or not (path / TOKENIZER).is_file():
        return f"no {WEIGHTS} or {TOKENIZER}"
    return _config_reason(_json(path / "config.json")) or _tokenizer_reason(path)


@dataclass(frozen=True, slots=True)
class _Layer:
    """One encoder layer's weights, laid out for ``x @ w`` (inputs by rows)."""

    qkv: Array  # (hidden, 3 * hidden): query, key and value in one product
    qkv_bias: Array
    out: Array
    out_bias: Array
    norm1: tuple[Array, Array]
    up: Array  # (hidden, intermediate)
    up_bias: Array
    down: Array
    down_bias: Array
    norm2: tuple[Array, Array]


def _layer(weights: dict[str, Array], prefix: str) -> _Layer:
    def w(name: str) -> Array:
        return weights[prefix + name]

    attention = "attention.self."
    parts = ("query", "key", "value")
    return _Layer(
        qkv=_by_rows(np.concatenate([w(f"{attention}{p}.weight") for p in parts])),
        qkv_bias=np.concatenate([w(f"{attention}{p}.bias") for p in parts]),
        out=_by_rows(w("attention.output.dense.weight")),
        out_bias=w("attention.output.dense.bias"),
        norm1=(
            w("attention.output.LayerNorm.weight"),
            w("attention.output.LayerNorm.bias"),
        ),
        up=_by_rows(w("intermediate.dense.weight")),
        up_bias=w("intermediate.dense.bias"),
        down=_by_rows(w("output.dense.weight")),
        down_bias=w("output.dense.bias"),
        norm2=(w("output.LayerNorm.weight"), w("output.LayerNorm.bias")),
    )


def _by_rows(weight: Array) -> Array:
    """A torch ``(out, in)`` weight as a contiguous ``(in, out)`` array.

    OpenBLAS multiplies a few rows (one query's tokens) by a contiguous
    matrix up to a quarter faster than by a transposed view; the copy costs
    a few milliseconds once, at load.
    """
    return np.ascontiguousarray(weight.T)


def _prefix(weights: dict[str, Array]) -> str:
    """``""`` or ``"bert."``: how the checkpoint names its encoder."""
    for prefix in ("", "bert."):
        if prefix + "embeddings.word_embeddings.weight" in weights:
            return prefix
    raise ValueError("not a BERT checkpoint: no embeddings.word_embeddings.weight")


class NumpyBert:
    """A BERT encoder (weights, tokenizer, pooling) run with numpy.

    Thread-safe: the weights are read-only and each call keeps its own
    buffers, so a background capture and a recall embed at once.

    Args:
        path: the model directory (``config.json``, ``model.safetensors``,
            ``tokenizer.json``); check it with :func:`unfit_reason` first.
        pooling: ``"mean"`` over the text's tokens, or ``"cls"``.
        max_tokens: texts are cut to this many tokens, special ones included.
    """

    def __init__(self, path: Path, pooling: str = "mean", max_tokens: int = MAX_TOKENS):
        from tokenizers import Tokenizer

        config = _json(path / "config.json")
        self.pooling = pooling
        self.heads = int(config["num_attention_heads"])
        self.eps = np.float32(config.get("layer_norm_eps", 1e-12))
        weights = read_safetensors(path / WEIGHTS)
        prefix = _prefix(weights)
        embeddings = prefix + "embeddings."
        self.words = weights[embeddings + "word_embeddings.weight"]
        self.positions = weights[embeddings + "position_embeddings.weight"]
        self.token_type = weights[embeddings + "token_type_embeddings.weight"][0]
        self.norm = (
            weights[embeddings + "LayerNorm.weight"],
            weights[embeddings + "LayerNorm.bias"],
        )
        self.layers = [
            _layer(weights, f"{prefix}encoder.layer.{i}.")
            for i in range(int(config["num_hidden_layers"]))
        ]
        # tokenizer.json carries its own padding and truncation (MiniLM's:
        # 128 tokens): set once here, as transformers sets them per call.
        self.tokenizer = Tokenizer.from_file(str(path / TOKENIZER))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(max_tokens)

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids, special tokens included, cut to the limit.

        One text at a time: ``encode_batch`` hands a call's few texts to the
        tokenizers thread pool, which is no faster for 32 sentences (0.97 ms
        against 0.85 ms) and makes the library warn when the process forks.
        """
        return [self.tokenizer.encode(text).ids for text in texts]

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> Vectors:
        """Pooled last hidden states of ``texts``, not normalised, in order."""
        ids = self.token_ids(texts)
        out = np.empty((len(texts), self.words.shape[1]), dtype=np.float32)
        for batch in length_batches([len(i) for i in ids], batch_size):
            out[batch] = self._pooled([ids[i] for i in batch])
        return out

    def _pooled(self, ids: list[list[int]]) -> Array:
        width = max(len(i) for i in ids)
        tokens = np.zeros((len(ids), width), dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.float32)
        for row, text in enumerate(ids):
            tokens[row, : len(text)] = text
            mask[row, : len(text)] = 1.0
        hidden = self.forward(tokens, mask)
        if self.pooling == "cls":
            return hidden[:, 0]
        summed = (hidden * mask[:, :, None]).sum(axis=1)
        pooled: Array = summed / mask.sum(axis=1, keepdims=True)
        return pooled

    def forward(self, tokens: npt.NDArray[np.int64], mask: Array) -> Array:
        """The last hidden state, ``(batch, tokens, hidden)``, of padded ids."""
        batch, width = tokens.shape
        x = self.words[tokens] + self.positions[:width] + self.token_type
        hidden = layer_norm(x.reshape(batch * width, -1), *self.norm, self.eps)
        bias = None if mask.all() else np.where(mask > 0, np.float32(0), _MASKED)
        for layer in self.layers:
            context = self._attention(hidden, layer, bias, batch)
            attended = context @ layer.out
            attended += layer.out_bias
            attended += hidden
            hidden = layer_norm(attended, *layer.norm1, self.eps)
            out = feed_forward(hidden, layer)
            out += hidden
            hidden = layer_norm(out, *layer.norm2, self.eps)
        shaped: Array = hidden.reshape(batch, width, -1)
        return shaped

    def _attention(
        self, hidden: Array, layer: _Layer, bias: Array | None, batch: int
    ) -> Array:
        """Multi-head self-attention, a few sequences at a time (bounded scores)."""
        rows, size = hidden.shape
        width, heads = rows // batch, self.heads
        qkv = hidden @ layer.qkv
        qkv += layer.qkv_bias
        # (batch, width, 3, heads, head) -> one contiguous array per part:
        # BLAS multiplies contiguous stacks, a strided view 3x slower.
        split = qkv.reshape(batch, width, 3, heads, size // heads)
        query = np.ascontiguousarray(split[:, :, 0].transpose(0, 2, 1, 3))
        keys = np.ascontiguousarray(split[:, :, 1].transpose(0, 2, 3, 1))
        values = np.ascontiguousarray(split[:, :, 2].transpose(0, 2, 1, 3))
        query *= np.float32(1.0 / np.sqrt(size // heads))
        context = self._scaled_dot(
            query.reshape(batch * heads, width, -1),
            keys.reshape(batch * heads, -1, width),
            values.reshape(batch * heads, width, -1),
            None if bias is None else np.repeat(bias, heads, axis=0)[:, None, :],
        )
        merged: Array = (
            context.reshape(batch, heads, width, -1)
            .transpose(0, 2, 1, 3)
            .reshape(rows, size)
        )
        return merged

    @staticmethod
    def _scaled_dot(
        query: Array, keys: Array, values: Array, bias: Array | None
    ) -> Array:
        """``softmax(q k + bias) v`` per (sequence, head), a cache-sized block at a time."""
        stack, width, _ = query.shape
        context = np.empty_like(query)
        step = max(1, _SCORES_BUDGET // (width * width))
        buffer = np.empty((min(step, stack), width, width), dtype=np.float32)
        for start in range(0, stack, step):
            part = slice(start, start + step)
            scores = buffer[: len(query[part])]
            np.matmul(query[part], keys[part], out=scores)
            if bias is not None:
                scores += bias[part]
            softmax_(scores)
            np.matmul(scores, values[part], out=context[part])
        return context


def softmax_(scores: Array) -> None:
    """Softmax over the last axis, in place."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)


def layer_norm(x: Array, weight: Array, bias: Array, eps: np.float32) -> Array:
    """Layer normalisation over the last axis (biased variance, as torch)."""
    centred: Array = x - x.mean(axis=-1, keepdims=True)
    variance = np.mean(np.square(centred), axis=-1, keepdims=True)
    centred /= np.sqrt(variance + eps)
    centred *= weight
    centred += bias
    return centred


def feed_forward(hidden: Array, layer: _Layer) -> Array:
    """``gelu(hidden @ up + b) @ down + b``, ``_FFN_ROWS`` rows at a time."""
    rows = hidden.shape[0]
    out = np.empty((rows, layer.down.shape[1]), dtype=np.float32)
    shape = (min(rows, _FFN_ROWS), layer.up.shape[1])
    buffers = [np.empty(shape, np.float32) for _ in range(4)]
    for start in range(0, rows, _FFN_ROWS):
        end = min(rows, start + _FFN_ROWS)
        up, a, t, p = (b[: end - start] for b in buffers)
        np.matmul(hidden[start:end], layer.up, out=up)
        up += layer.up_bias
        for row in range(0, end - start, _GELU_ROWS):
            rows_ = slice(row, row + _GELU_ROWS)
            gelu_(up[rows_], a[rows_], t[rows_], p[rows_])
        np.matmul(p, layer.down, out=out[start:end])
    out += layer.down_bias
    return out


def gelu_(x: Array, a: Array, t: Array, p: Array) -> Array:
    """Exact (erf) GELU of ``x`` into ``p``; ``a`` and ``t`` are scratch.

    ``gelu(x) = (x + |x| erf(|x| / sqrt 2)) / 2``, with erf by Abramowitz &
    Stegun (``_ERF_A``). Only ufuncs writing into buffers the caller reuses:
    fresh arrays of this size cost more in page faults than in arithmetic.
    """
    np.abs(x, out=a)
    a *= _SQRT_HALF
    np.minimum(a, _ERF_CLIP, out=a)  # z = |x| / sqrt 2
    np.multiply(a, _ERF_P, out=t)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)  # t = 1 / (1 + P z)
    np.multiply(t, _ERF_A[0], out=p)
    for coefficient in _ERF_A[1:]:
        p += coefficient
        p *= t
    np.multiply(a, a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    p *= a  # 1 - erf(z) = poly(t) exp(-z^2)
    np.abs(x, out=a)
    p *= a
    np.subtract(a, p, out=p)  # |x| erf(z)
    p += x
    p *= np.float32(0.5)
    return p
