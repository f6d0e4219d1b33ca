"""A memory's fields changed by hand, with compare-and-swap on its version.

:meth:`Lifecycle.update <.ops.Lifecycle.update>` hands its call here. Only
the fields in :data:`UPDATABLE` may change; a new ``content`` is checked,
embedded again, summarised again (unless a summary is given) and read
again for its times (:func:`.correct.read_again`). The update holds the
namespace and the memory's lease, so it is a compare-and-swap across
threads and processes: a stored version other than ``expected_version``
raises :class:`~hindsight_lg.errors.ConflictError`, and the caller re-reads.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hindsight_lg import telemetry
from hindsight_lg._text import summarize
from hindsight_lg.backends.base import check_text
from hindsight_lg.errors import ConflictError
from hindsight_lg.memory.capture.vectors import embed_records
from hindsight_lg.memory.lifecycle import correct as correction
from hindsight_lg.model import MemoryRecord

if TYPE_CHECKING:
    from hindsight_lg.memory.lifecycle.ops import Lifecycle

#: The fields :func:`update` may set.
UPDATABLE = frozenset(
    """content summary kind importance confidence status valid_until entities
    participants goal action emotion scope tier half_life_days meta strength
    superseded_by event_time source_kind""".split()
)


def update(
    life: Lifecycle,
    namespace: str,
    memory_id: str,
    expected_version: int | None,
    changes: dict[str, Any],
) -> MemoryRecord:
    """Change fields of a memory; see ``Lifecycle.update`` (and the module)."""
    unknown = set(changes) - UPDATABLE
    if unknown:
        raise ValueError(
            f"cannot update {sorted(unknown)}; allowed: {sorted(UPDATABLE)}"
        )
    if "content" in changes:
        check_text(changes["content"], "content")
    with (
        telemetry.memory_span(
            telemetry.UPDATE,
            telemetry.UPDATE_MEMORY,
            namespace=namespace,
            memory_id=memory_id,
        ),
        life.locked(namespace),
        life.backend.exclusive(namespace, f"memory:{memory_id}"),
    ):
        record = life.read(namespace, memory_id)
        if expected_version is not None and record.version != expected_version:
            raise ConflictError(
                f"memory {memory_id} is at version {record.version}, "
                f"not {expected_version}: re-read it and retry"
            )
        for key, value in changes.items():
            setattr(record, key, value)
        record.__post_init__()
        if "content" in changes:
            record.dense = embed_records(life.embedder, [record.content])[0]
            if "summary" not in changes:  # the old summary told the old text
                record.summary = summarize(record.content)
            correction.read_again(record, life.clock(), given=changes)
        record.version += 1
        life.save(
            namespace,
            [record],
            "update",
            {"fields": sorted(changes), "content": record.content},
        )
        return record
