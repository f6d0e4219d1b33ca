"""Validation of imported items: an export file is untrusted input.

``MemoryRecord.from_dict`` trusts its input; these checks run first so a bad
file fails with the line number and the field, never deep inside scoring.
"""

from __future__ import annotations

import math
from typing import Any

from hindsight_lg.model import AuditEntry, Edge, MemoryRecord

_FLOATS = (
    "event_time",
    "created_at",
    "last_accessed_at",
    "importance",
    "confidence",
    "strength",
    "half_life_days",
    "salience",
)
_OPTIONAL_FLOATS = ("valid_until", "mentioned_time")
_INTS = ("access_count", "version")
_STRS = ("namespace", "content", "agent_id", "summary", "goal", "action", "emotion")
_STR_LISTS = ("participants", "entities", "source_ids")
_MAX_ID = 64  # the Milvus primary-key fields are VARCHAR(64)
_MAX_TEXT = 65535


def _fail(lineno: int, what: str) -> ValueError:
    return ValueError(f"line {lineno}: {what}")


def _is_number(value: Any) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def _check_id(value: Any, lineno: int, name: str) -> None:
    if not isinstance(value, str) or not 0 < len(value) <= _MAX_ID:
        raise _fail(lineno, f"{name} must be a string of 1 to {_MAX_ID} characters")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise _fail(lineno, f"{name} holds control characters")


def _check_str(value: Any, lineno: int, name: str) -> None:
    if not isinstance(value, str) or len(value) > _MAX_TEXT or "\x00" in value:
        raise _fail(lineno, f"{name} must be text without NUL, at most {_MAX_TEXT}")


def _check_scalars(data: dict[str, Any], lineno: int) -> None:
    for name in _FLOATS:
        if name in data and not _is_number(data[name]):
            raise _fail(lineno, f"{name} must be a finite number")
    for name in _OPTIONAL_FLOATS:
        if data.get(name) is not None and not _is_number(data[name]):
            raise _fail(lineno, f"{name} must be a finite number or null")
    for name in _INTS:
        if name in data and (type(data[name]) is not int or data[name] < 0):
            raise _fail(lineno, f"{name} must be a non-negative integer")
    for name in _STRS:
        if name in data:
            _check_str(data[name], lineno, name)
    for name in _STR_LISTS:
        value = data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _fail(lineno, f"{name} must be a list of strings")


def _check_vectors(data: dict[str, Any], lineno: int) -> None:
    dense = data.get("dense", [])
    if not isinstance(dense, list) or not all(_is_number(x) for x in dense):
        raise _fail(lineno, "dense must be a list of finite numbers")
    sparse = data.get("sparse", {})
    if not isinstance(sparse, dict) or not all(
        isinstance(k, str) and k.isdigit() and _is_number(v) for k, v in sparse.items()
    ):
        raise _fail(lineno, "sparse must map term ids to finite numbers")


def check_record(data: Any, lineno: int) -> MemoryRecord:
    """A validated record from an export line's ``data``.

    Raises:
        ValueError: a field is missing, of the wrong type, or out of range.
    """
    if not isinstance(data, dict):
        raise _fail(lineno, "a record must be an object")
    for name in ("id", "namespace", "content"):
        if name not in data:
            raise _fail(lineno, f"the record has no {name}")
    _check_id(data["id"], lineno, "id")
    if data.get("superseded_by") is not None:
        _check_id(data["superseded_by"], lineno, "superseded_by")
    if not isinstance(data.get("meta", {}), dict):
        raise _fail(lineno, "meta must be an object")
    _check_scalars(data, lineno)
    _check_vectors(data, lineno)
    try:
        return MemoryRecord.from_dict(data)
    except (TypeError, ValueError) as exc:
        raise _fail(lineno, f"invalid record ({str(exc)[:120]})") from exc


def check_edge(data: Any, lineno: int) -> Edge:
    """A validated edge from an export line's ``data``.

    Raises:
        ValueError: a field is missing or of the wrong type.
    """
    if not isinstance(data, dict):
        raise _fail(lineno, "an edge must be an object")
    for name in ("src", "dst"):
        _check_id(data.get(name), lineno, name)
    _check_str(data.get("namespace"), lineno, "namespace")
    for name in ("weight", "created_at"):
        if name in data and not _is_number(data[name]):
            raise _fail(lineno, f"{name} must be a finite number")
    try:
        return Edge.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(lineno, f"invalid edge ({str(exc)[:120]})") from exc


def check_audit(data: Any, lineno: int) -> AuditEntry:
    """A validated audit entry from an export line's ``data``.

    Raises:
        ValueError: a field is missing or of the wrong type.
    """
    if not isinstance(data, dict):
        raise _fail(lineno, "an audit entry must be an object")
    _check_id(data.get("id"), lineno, "id")
    _check_str(data.get("namespace"), lineno, "namespace")
    _check_str(data.get("op"), lineno, "op")
    if not isinstance(data.get("memory_id"), str) or len(data["memory_id"]) > _MAX_ID:
        raise _fail(lineno, "memory_id must be a string")
    if not _is_number(data.get("at")) or not isinstance(data.get("detail", {}), dict):
        raise _fail(lineno, "at must be a finite number and detail an object")
    return AuditEntry.from_dict(data)
