"""Milvus: a Milvus Lite file for one process, a Milvus server for many.

The package owns everything Milvus-specific: the backend, its expression
language, leases between processes on a server, Lite file repair, and the
copy into new collections that re-embedding needs.
"""

from __future__ import annotations

from hindsight_lg.backends.milvus import _quiet
from hindsight_lg.backends.milvus.backend import MilvusBackend

# pymilvus and Milvus Lite noise users cannot act on (see _quiet).
_quiet.install()

__all__ = ["MilvusBackend"]
