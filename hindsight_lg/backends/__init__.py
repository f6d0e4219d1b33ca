"""Storage behind a small protocol: Milvus (Lite file or server URI) and in-memory.

The storage layer knows the data model (:mod:`hindsight_lg.model`) and nothing
above it. What a backend may do beyond the protocol is a small protocol each
(:mod:`hindsight_lg.backends.optional`), re-exported here for the engine. The engine reaches a concrete backend only through the factories
here (:func:`open_backend`, :func:`copy_generation`), which import Milvus on
first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from hindsight_lg.backends.base import (
    MAX_LABEL_BYTES,
    MAX_NAMESPACE_BYTES,
    MAX_TEXT_BYTES,
    Capabilities,
    CopyReport,
    Hit,
    MemoryBackend,
    Where,
    check_namespace,
    check_text,
    visible_to,
)
from hindsight_lg.backends.cached import CachedBackend
from hindsight_lg.backends.forwarding import ForwardingBackend
from hindsight_lg.backends.handle import (
    StoreHandle,
    open_handle,
    read_cache_of,
    store_handle,
    with_read_cache,
)
from hindsight_lg.backends.lexical import bm25_scores
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.backends.optional import (
    STAMPS_PRUNE_S,
    CombinedWrites,
    DenseIds,
    HoldsCold,
    LiteStore,
    LiveCheck,
    LocalDense,
    Refresh,
    StoredModel,
    WriteStamps,
    combines_writes,
    local_dense_search,
    stored_model,
)

if TYPE_CHECKING:
    from hindsight_lg.backends.milvus.generations import Revector


def open_backend(
    uri: str, *, token: str = "", prefix: str = "hindsight"
) -> MemoryBackend:
    """The backend a URI names: ``:memory:``, a Milvus Lite file, or a server.

    Args:
        uri: ``":memory:"``, a file path, or ``http(s)://host:19530``.
        token: server credentials (``user:password`` or an API key).
        prefix: collection prefix, so several stores can share one server.
    """
    if uri == ":memory:":
        return InMemoryBackend()
    from hindsight_lg.backends.milvus import MilvusBackend

    return MilvusBackend.from_uri(uri, token=token, prefix=prefix)


def copy_generation(
    uri: str,
    *,
    dim: int,
    model_id: str,
    revector: Revector | None,
    token: str = "",
    prefix: str = "hindsight",
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy a Milvus store into re-vectored collections and switch to them.

    See :mod:`hindsight_lg.backends.milvus.generations`.
    """
    if uri == ":memory:":
        raise ValueError("re-embedding needs a Milvus store (a file or a server)")
    from hindsight_lg.backends.milvus.generations import copy_generation as copy

    return copy(
        uri,
        dim=dim,
        model_id=model_id,
        revector=revector,
        token=token,
        prefix=prefix,
        progress=progress,
    )


def migrate_generation(
    uri: str,
    *,
    token: str = "",
    prefix: str = "hindsight",
    progress: Callable[[int, int], None] | None = None,
) -> CopyReport:
    """Copy a Milvus store into collections of the current schema, same vectors.

    See :func:`hindsight_lg.backends.milvus.generations.migrate_generation`.
    """
    if uri == ":memory:":
        raise ValueError("migrating needs a Milvus store (a file or a server)")
    from hindsight_lg.backends.milvus.generations import migrate_generation as copy

    return copy(uri, token=token, prefix=prefix, progress=progress)


__all__ = [
    "CachedBackend",
    "Capabilities",
    "CombinedWrites",
    "CopyReport",
    "DenseIds",
    "ForwardingBackend",
    "Hit",
    "HoldsCold",
    "InMemoryBackend",
    "LiteStore",
    "LiveCheck",
    "LocalDense",
    "MAX_LABEL_BYTES",
    "MAX_NAMESPACE_BYTES",
    "MAX_TEXT_BYTES",
    "MemoryBackend",
    "Refresh",
    "STAMPS_PRUNE_S",
    "StoreHandle",
    "StoredModel",
    "Where",
    "WriteStamps",
    "bm25_scores",
    "check_namespace",
    "check_text",
    "combines_writes",
    "copy_generation",
    "local_dense_search",
    "migrate_generation",
    "open_backend",
    "open_handle",
    "read_cache_of",
    "store_handle",
    "stored_model",
    "visible_to",
    "with_read_cache",
]
