"""hindsight-lg: long-term memory for LangGraph agents.

Example:
    >>> from hindsight_lg import HindsightMemory
    >>> memory = HindsightMemory.from_uri("./hindsight.db")  # doctest: +SKIP
"""

from __future__ import annotations

from hindsight_lg.backends import MemoryBackend, Where
from hindsight_lg.embeddings import (
    Embedder,
    FlagEmbeddingEmbedder,
    FlagEmbeddingReranker,
    HashingEmbedder,
    Reranker,
)
from hindsight_lg.errors import (
    ConflictError,
    EmbeddingError,
    EmbeddingMismatch,
    EncodingError,
    HindsightError,
    ModelNotAvailable,
    StoreError,
    StoreLocked,
    StoreTimeout,
    StoreUnavailable,
)
from hindsight_lg.memory import (
    DEFAULT_TIMEOUT,
    HindsightMemory,
    Policy,
    RecalledMemory,
    RecallResult,
)
from hindsight_lg.model import (
    AuditEntry,
    Edge,
    EdgeType,
    Kind,
    MemoryRecord,
    Scope,
    SourceKind,
    Status,
    Tier,
)

__version__ = "0.1.0"

__all__ = [
    "AuditEntry",
    "ConflictError",
    "DEFAULT_TIMEOUT",
    "Edge",
    "EdgeType",
    "Embedder",
    "EmbeddingError",
    "EmbeddingMismatch",
    "EncodingError",
    "FlagEmbeddingEmbedder",
    "FlagEmbeddingReranker",
    "HashingEmbedder",
    "HindsightError",
    "HindsightMemory",
    "Kind",
    "MemoryBackend",
    "MemoryRecord",
    "ModelNotAvailable",
    "Policy",
    "RecallResult",
    "RecalledMemory",
    "Reranker",
    "Scope",
    "SourceKind",
    "Status",
    "StoreError",
    "StoreLocked",
    "StoreTimeout",
    "StoreUnavailable",
    "Tier",
    "Where",
    "__version__",
]
