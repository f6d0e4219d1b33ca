"""What property tests may draw as a record's meta: what ``remember`` accepts."""

from __future__ import annotations

from typing import Any

from hindsight_lg.memory.lifecycle.reserved import check_meta


def meta_ok(meta: dict[str, Any]) -> bool:
    """Whether the reserved keys of ``meta`` hold what their readers use."""
    try:
        check_meta(meta)
    except ValueError:
        return False
    return True
