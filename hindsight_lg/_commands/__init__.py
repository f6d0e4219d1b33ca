"""Sub-commands of the ``hindsight-lg`` CLI, one module each."""

from __future__ import annotations

import argparse
from typing import Any


def add_store_args(p: argparse.ArgumentParser, *, namespace: bool = True) -> None:
    """The options every command that opens memory shares."""
    p.add_argument(
        "--uri",
        default="./hindsight.db",
        help="Milvus Lite file or http(s):// server (default ./hindsight.db)",
    )
    p.add_argument(
        "--embedder",
        default=None,
        help="hashing, minilm, bge-m3 or a model directory (default: best available)",
    )
    if namespace:
        p.add_argument("--namespace", "-n", required=True, help="tenant / user id")


def open_memory(args: argparse.Namespace, **kwargs: Any) -> Any:
    """Open the memory the common options describe."""
    from hindsight_lg import HindsightMemory

    return HindsightMemory.from_uri(args.uri, embedder=args.embedder, **kwargs)
