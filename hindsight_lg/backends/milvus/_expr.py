"""Milvus boolean expressions built from escaped literals, never from raw input.

Milvus Lite does not accept ``filter_params`` templates, so every string that
reaches an expression passes through :func:`lit`, which escapes backslashes and
quotes and rejects control characters. Numbers go through :func:`num`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from hindsight_lg.backends.base import Where


def lit(value: str) -> str:
    """A double-quoted Milvus string literal for ``value``.

    Raises:
        ValueError: ``value`` holds control or surrogate characters (no
            legitimate id does).
    """
    if not isinstance(value, str):
        raise TypeError(f"expected str, got {type(value).__name__}")
    if any(
        ord(ch) < 32 or ord(ch) == 127 or 0xD800 <= ord(ch) < 0xE000 for ch in value
    ):
        # Surrogates cannot be encoded for the wire: reject them here, clearly.
        raise ValueError(
            f"control or surrogate characters are not allowed in {value[:40]!r}"
        )
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lits(values: Sequence[str]) -> str:
    """A Milvus list literal of strings."""
    return "[" + ", ".join(lit(v) for v in values) + "]"


def num(value: float) -> str:
    """A finite number literal."""
    value = float(value)
    if not math.isfinite(value):
        raise ValueError("expected a finite number")
    return repr(value)


def where_expr(namespace: str, where: Where) -> str:
    """The Milvus filter for ``where`` inside ``namespace``."""
    parts = [f"namespace == {lit(namespace)}"]
    if where.statuses:
        parts.append(f"status in {lits(where.statuses)}")
    if where.kinds:
        parts.append(f"kind in {lits(where.kinds)}")
    if where.tiers:
        parts.append(f"tier in {lits(where.tiers)}")
    if where.ids:
        parts.append(f"id in {lits(where.ids)}")
    if where.thread_id is not None:
        parts.append(f"thread_id == {lit(where.thread_id)}")
    if where.since is not None:
        parts.append(f"event_time >= {num(where.since)}")
    if where.until is not None:
        parts.append(f"event_time < {num(where.until)}")
    if where.min_strength is not None:
        parts.append(f"strength >= {num(where.min_strength)}")
    if where.reader is not None:
        parts.append(f'(scope != "private" or agent_id in {lits(["", where.reader])})')
    return " and ".join(parts)
