"""Test helper: what a crash leaves of a spool, without a second process."""

from __future__ import annotations

import os

from hindsight_lg.memory.durability.spool import Spool


def crash(spool: Spool) -> None:
    """Let go of a spool the way a killed process does: no compaction, no ack.

    The kernel closes both descriptors of a dead process, so the file stays
    as written and its lock is free for the next owner.
    """
    os.close(spool._fd)
    os.close(spool._lock_fd)
