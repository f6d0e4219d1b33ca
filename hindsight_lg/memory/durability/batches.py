"""Where a capture's writes go: staged, then written at once or handed to the group commit.

The capture path (:mod:`hindsight_lg.memory.capture`) places a turn's records
inside one batch and knows only a backend view: :meth:`Batches.batch` gives
it a :class:`~.staging.StagedWrites` view whose reads see what the capture
staged so far. When the block ends, a spooled capture's writes go to the
group commit's shared stage (:class:`~.commit.GroupCommit`), which writes,
flushes and acknowledges them later; any other capture's writes are sent in
one round per collection and flushed. A block that raises writes nothing.

This is how durability is entered from the capture path: through an object
the wiring hands it, never through an import.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.memory.durability.staging import StagedWrites

if TYPE_CHECKING:
    from hindsight_lg.memory.durability.commit import GroupCommit


class Batches:
    """A capture's batch over ``base``, or over the group commit's stage.

    Args:
        base: the store view writes go to without group commit.
        group: the group commit; a spooled capture's writes go to its stage.
    """

    def __init__(self, base: MemoryBackend, group: GroupCommit | None = None) -> None:
        self.base = base
        self.group = group

    @contextmanager
    def batch(self, namespace: str, capture_id: str | None) -> Iterator[MemoryBackend]:
        """The staging view for one capture's writes; they go out at the end."""
        group = self.group if capture_id is not None else None
        staged = StagedWrites(group.stage if group is not None else self.base)
        yield staged
        if group is not None and capture_id is not None:
            group.take(staged, namespace, capture_id)
        else:
            staged.commit()
            self.base.flush()
