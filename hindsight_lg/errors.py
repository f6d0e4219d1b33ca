"""Errors raised by hindsight-lg.

The hierarchy::

    HindsightError
    ├── StoreError                 the long-term store failed
    │   ├── StoreUnavailable       it cannot be reached or opened
    │   │   └── StoreLocked        another process holds a Milvus Lite file or spool
    │   ├── StoreTimeout           it did not answer in time
    │   └── ConflictError          a compare-and-swap lost against a newer version
    ├── EmbeddingError             an embedding model is missing or mismatched
    │   ├── ModelNotAvailable      the model is neither local nor cached
    │   └── EmbeddingMismatch      stored vectors come from another model
    └── EncodingError              a turn could not be turned into memories

Caller mistakes (an empty namespace, a negative budget) stay ``ValueError`` or
``TypeError``. Backend exceptions are translated at the boundary with
``raise ... from exc`` so the original is never lost.
"""

from __future__ import annotations


class HindsightError(Exception):
    """Base class of every error hindsight-lg raises on purpose."""


class StoreError(HindsightError):
    """The long-term store failed."""


class StoreUnavailable(StoreError):
    """The store cannot be reached or opened."""


class StoreLocked(StoreUnavailable):
    """Another process holds the Milvus Lite file open, or owns the capture spool."""


class StoreTimeout(StoreError):
    """The store did not answer in time."""


class ConflictError(StoreError):
    """A compare-and-swap update lost against a newer version of the record."""


class EmbeddingError(HindsightError):
    """An embedding model is missing or does not match the stored vectors."""


class ModelNotAvailable(EmbeddingError):
    """The requested model is neither a local directory nor in the local cache."""


class EmbeddingMismatch(EmbeddingError):
    """The collection holds vectors from another model or of another dimension."""


class EncodingError(HindsightError):
    """A turn could not be turned into memories."""


__all__ = [
    "ConflictError",
    "EmbeddingError",
    "EmbeddingMismatch",
    "EncodingError",
    "HindsightError",
    "ModelNotAvailable",
    "StoreError",
    "StoreLocked",
    "StoreTimeout",
    "StoreUnavailable",
]
