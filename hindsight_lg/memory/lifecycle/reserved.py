"""The metadata keys the engine and ``HindsightStore`` read back, and what each holds.

A memory's ``meta`` belongs to the caller except for these keys: the lifecycle
and the store read them back and need their types. ``remember`` refuses a
``meta`` that breaks them, as ``import`` refuses such a line: a bad value would
fail every later read of the namespace, not the write that put it there, and an
export of it would not import.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from hindsight_lg.backends.base import MAX_DOC_BYTES, MAX_NAME_BYTES, check_text

# What HindsightStore keeps in meta["store"] and beside it.
_STORE_NUMBERS = ("ttl", "expires_at")
_STORE_INTS = ("seq", "ns_seq")
_META_NUMBERS = ("store_updated", "confirmations")


def is_number(value: Any) -> bool:
    """A finite int or float, not a bool."""
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
    )


def check_meta(meta: Any) -> None:
    """Raise ``ValueError`` if ``meta`` breaks a key the engine or the store reads.

    Example:
        >>> check_meta({"source": "crm", "store": 0})
        Traceback (most recent call last):
        ...
        ValueError: meta.store must be an object
    """
    if not isinstance(meta, Mapping):
        raise ValueError("meta must be an object")
    for name in _META_NUMBERS:
        if name in meta and not is_number(meta[name]):
            raise ValueError(f"meta.{name} must be a finite number")
    if "derived_from" in meta and not (
        isinstance(meta["derived_from"], list)
        and all(isinstance(x, str) for x in meta["derived_from"])
    ):
        raise ValueError("meta.derived_from must be a list of ids")
    if "store" in meta:
        _check_store_meta(meta["store"])


def _check_store_meta(stored: Any) -> None:
    if not isinstance(stored, dict):
        raise ValueError("meta.store must be an object")
    labels = stored.get("namespace")
    if not isinstance(labels, list) or not labels:
        raise ValueError("meta.store.namespace must be a non-empty list of labels")
    try:
        for label in labels:
            check_text(label, "a label of meta.store.namespace", MAX_NAME_BYTES)
        check_text(stored.get("key"), "meta.store.key", MAX_DOC_BYTES)
    except TypeError as exc:  # one kind of error for every bad value
        raise ValueError(str(exc)) from None
    if not isinstance(stored.get("value"), dict):
        raise ValueError("meta.store.value must be an object")
    if "index" in stored and not isinstance(stored["index"], bool):
        raise ValueError("meta.store.index must be true or false")
    for name in _STORE_NUMBERS:
        if stored.get(name) is not None and not is_number(stored[name]):
            raise ValueError(f"meta.store.{name} must be a number or null")
    for name in _STORE_INTS:
        if name in stored and type(stored[name]) is not int:
            raise ValueError(f"meta.store.{name} must be an integer")
