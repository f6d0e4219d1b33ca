"""What engines on one store share, hung on the store's handle.

Engines on one store (two ``from_uri`` calls on a Milvus Lite file, or two
engines handed one backend object) must share its read cache, its write
locks, and per spool file one spool and one group commit: two of any would
let captures cross or reads miss writes. The store's
:class:`~hindsight_lg.backends.StoreHandle` owns them all (see
:mod:`hindsight_lg.backends.handle`); this module names the engine's parts
on it (the spool and group commit: ``durability.commit.open_durability``).
The last engine to release the handle closes them.
"""

from __future__ import annotations

from hindsight_lg.backends import StoreHandle
from hindsight_lg.memory._locks import WriteLocks


def write_locks(handle: StoreHandle) -> WriteLocks:
    """The write locks of the store, shared by every engine using it."""
    locks, _ = handle.part("write-locks", WriteLocks)
    return locks
