"""Validation of imported items: an export file is untrusted input.

``MemoryRecord.from_dict`` trusts its input; these checks run first so a bad
file fails with the line number and the field, never deep inside scoring or
half-way through writing. Besides types and ranges they hold every item to the
limits of the strictest backend (``hindsight_lg.backends.base``: a Milvus
server counts bytes, not characters), so what passes here can be stored.
"""

from __future__ import annotations

import json
from typing import Any

from hindsight_lg.backends.base import (
    MAX_DOC_BYTES,
    MAX_ID_BYTES,
    MAX_NAME_BYTES,
    MAX_NAMESPACE_BYTES,
    MAX_OP_BYTES,
)
from hindsight_lg.memory.lifecycle.reserved import check_meta, is_number
from hindsight_lg.model import AuditEntry, Edge, MemoryRecord, to_datetime

_TIMES = ("event_time", "created_at", "last_accessed_at")
_OPTIONAL_TIMES = ("valid_until", "mentioned_time")
_FLOATS = ("importance", "confidence", "strength", "half_life_days", "salience")
_INTS = ("access_count", "version")
_TEXTS = ("namespace", "content", "summary", "goal", "action", "emotion")
_NAMES = ("agent_id", "thread_id")
_STR_LISTS = ("participants", "entities", "source_ids")


def _fail(lineno: int, what: str) -> ValueError:
    return ValueError(f"line {lineno}: {what}")


def _size(value: str) -> int:
    return len(value.encode("utf-8", "surrogatepass"))


def _check_time(value: Any, lineno: int, name: str) -> None:
    # Recall renders times as dates: one a datetime cannot hold would fail
    # every later recall of the namespace, not this import.
    try:
        ok = is_number(value) and to_datetime(value).year > 0
    except (OverflowError, OSError, ValueError):
        ok = False
    if not ok:
        raise _fail(lineno, f"{name} must be a POSIX time between years 1 and 9999")


def _check_id(value: Any, lineno: int, name: str) -> None:
    if not isinstance(value, str) or not 0 < _size(value) <= MAX_ID_BYTES:
        raise _fail(lineno, f"{name} must be a string of 1 to {MAX_ID_BYTES} bytes")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
        raise _fail(lineno, f"{name} holds control characters")


def _check_str(
    value: Any, lineno: int, name: str, limit: int = MAX_DOC_BYTES, nul: bool = False
) -> None:
    if not isinstance(value, str) or (not nul and "\x00" in value):
        raise _fail(lineno, f"{name} must be text without NUL")
    if any(0xD800 <= ord(ch) <= 0xDFFF for ch in value):
        raise _fail(lineno, f"{name} holds unpaired surrogates")
    if _size(value) > limit:
        raise _fail(lineno, f"{name} is longer than {limit} bytes of UTF-8")


def _check_scalars(data: dict[str, Any], lineno: int) -> None:
    for name in _TIMES:
        if name in data:
            _check_time(data[name], lineno, name)
    for name in _OPTIONAL_TIMES:
        if data.get(name) is not None:
            _check_time(data[name], lineno, name)
    for name in _FLOATS:
        if name in data and not is_number(data[name]):
            raise _fail(lineno, f"{name} must be a finite number")
    for name in _INTS:
        if name in data and (type(data[name]) is not int or data[name] < 0):
            raise _fail(lineno, f"{name} must be a non-negative integer")
    for name in _TEXTS:
        if name in data:
            _check_str(data[name], lineno, name)
    for name in _NAMES:
        if name in data:
            _check_str(data[name], lineno, name, MAX_NAME_BYTES)
    for name in _STR_LISTS:
        value = data.get(name, [])
        if not isinstance(value, list):
            raise _fail(lineno, f"{name} must be a list of strings")
        for item in value:
            # Kept only in the stored JSON document, where NUL is escaped.
            _check_str(item, lineno, f"an item of {name}", nul=True)


def _check_meta(meta: Any, lineno: int) -> None:
    """The engine's and the store's metadata keys hold what their readers need."""
    try:
        check_meta(meta)
    except ValueError as exc:
        raise _fail(lineno, str(exc)) from None


def _check_vectors(data: dict[str, Any], lineno: int) -> None:
    dense = data.get("dense", [])
    if not isinstance(dense, list) or not all(is_number(x) for x in dense):
        raise _fail(lineno, "dense must be a list of finite numbers")
    sparse = data.get("sparse", {})
    if not isinstance(sparse, dict) or not all(
        isinstance(k, str) and k.isdigit() and is_number(v) for k, v in sparse.items()
    ):
        raise _fail(lineno, "sparse must map term ids to finite numbers")


def _check_doc(
    doc: dict[str, Any], lineno: int, what: str, namespace: str | None
) -> None:
    """The stored document fits the backend's JSON field (compact UTF-8).

    Sized under ``namespace``, the one the import writes it to; when that is
    not known, as if its namespace were the longest allowed.
    """
    if namespace is not None:
        doc = {**doc, "namespace": namespace}
    try:
        text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError) as exc:
        raise _fail(lineno, f"{what} cannot be stored as JSON ({exc})") from exc
    size = _size(text)
    if namespace is None:
        size += MAX_NAMESPACE_BYTES - _size(doc["namespace"])
    if size > MAX_DOC_BYTES:
        raise _fail(
            lineno,
            f"{what} takes up to {size} bytes stored, over the limit of "
            f"{MAX_DOC_BYTES} (content, summary and meta together)",
        )


def check_record(data: Any, lineno: int, namespace: str | None = None) -> MemoryRecord:
    """A validated record from an export line's ``data``, sized under ``namespace``.

    Raises:
        ValueError: a field is missing, of the wrong type, out of range, or
            larger than the store can hold.
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
    _check_meta(data.get("meta", {}), lineno)
    _check_scalars(data, lineno)
    _check_vectors(data, lineno)
    try:
        record = MemoryRecord.from_dict(data)
    except (TypeError, ValueError) as exc:
        raise _fail(lineno, f"invalid record ({str(exc)[:120]})") from exc
    _check_doc(record.to_dict(vectors=False), lineno, "the record", namespace)
    return record


def check_edge(data: Any, lineno: int) -> Edge:
    """A validated edge from an export line's ``data``.

    Raises:
        ValueError: a field is missing, of the wrong type or too large.
    """
    if not isinstance(data, dict):
        raise _fail(lineno, "an edge must be an object")
    for name in ("src", "dst"):
        _check_id(data.get(name), lineno, name)
    _check_str(data.get("namespace"), lineno, "namespace")
    if "weight" in data and not is_number(data["weight"]):
        raise _fail(lineno, "weight must be a finite number")
    if "created_at" in data:
        _check_time(data["created_at"], lineno, "created_at")
    try:
        return Edge.from_dict(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise _fail(lineno, f"invalid edge ({str(exc)[:120]})") from exc


def check_audit(data: Any, lineno: int, namespace: str | None = None) -> AuditEntry:
    """A validated audit entry from an export line's ``data``, sized under ``namespace``.

    Raises:
        ValueError: a field is missing, of the wrong type or too large.
    """
    if not isinstance(data, dict):
        raise _fail(lineno, "an audit entry must be an object")
    _check_id(data.get("id"), lineno, "id")
    if data.get("memory_id") != "":  # "" marks a namespace-level entry
        _check_id(data.get("memory_id"), lineno, "memory_id")
    _check_str(data.get("namespace"), lineno, "namespace")
    _check_str(data.get("op"), lineno, "op", MAX_OP_BYTES)
    if not data["op"]:
        raise _fail(lineno, "op must not be empty")
    _check_time(data.get("at"), lineno, "at")
    if not isinstance(data.get("detail", {}), dict):
        raise _fail(lineno, "detail must be an object")
    entry = AuditEntry.from_dict(data)
    _check_doc(entry.to_dict(), lineno, "the audit entry", namespace)
    return entry
