"""Export and import of one namespace (verified forgetting: ``jobs.erasure``).

The export format is JSON Lines: a header, then one line per record, edge and
audit entry, then an ``end`` line with the counts and a SHA-256 of the header
line (a file cut short, or a header edited, is caught, not half-imported).
Vectors are optional: without them, import re-embeds the content with the
importing memory's embedder.

Every line after the header carries its position (``seq``, 1 for the first)
and the export's random id (``export``), and import checks both: a line
duplicated, dropped, moved or taken from another export is refused.

With a passphrase, every line after the header is a Fernet token (AES-128-CBC +
HMAC-SHA256) under a key derived from the passphrase with scrypt; the header
holds the salt. Fernet has no associated data, so position and export id sit
inside the authenticated plaintext, which binds each line as associated data
would; the end line's header digest authenticates the header. That needs
``pip install 'hindsight-lg[crypto]'``.

Import trusts nothing in the file: the target namespace is always the
caller's (the header's namespace only has to match the items), a plaintext
file is refused when a passphrase is given, and every item is checked against
the store's limits before the first write.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from hindsight_lg.backends.base import (
    MemoryBackend,
    Where,
    check_namespace,
    visible_to,
)
from hindsight_lg.errors import StoreError
from hindsight_lg.memory.jobs._engine import Engine
from hindsight_lg.memory.jobs._format import (
    FORMAT,
    FORMAT_VERSION,
    ExportFile,
    LineWriter,
    read_export,
)
from hindsight_lg.model import ENTITY_PREFIX, Edge, MemoryRecord, now_ts

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "ExportFile",
    "TransferStats",
    "export_namespace",
    "import_namespace",
    "read_export",
]

_BATCH = 500


@dataclass(slots=True)
class TransferStats:
    """How many records, edges and audit entries an export or import moved."""

    records: int = 0
    edges: int = 0
    audit: int = 0
    reembedded: int = 0

    def as_dict(self) -> dict[str, int]:
        """The counts as a plain dict."""
        return {
            "records": self.records,
            "edges": self.edges,
            "audit": self.audit,
            "reembedded": self.reembedded,
        }


# -- export -----------------------------------------------------------------


def all_records(memory: Engine, namespace: str, vectors: bool) -> list[MemoryRecord]:
    """Every record of a namespace, whatever its status."""
    where = Where(statuses=())  # every status, deleted included: exact restore
    return list(memory.backend.query(namespace, where, limit=10**7, vectors=vectors))


def edges_of(memory: Engine, namespace: str, ids: list[str]) -> list[Edge]:
    """Edges touching ``ids``, each once, oldest first."""
    # One query per batch of ids: never the whole graph at once.
    seen: dict[str, Edge] = {}
    for start in range(0, len(ids), _BATCH):
        for edge in memory.backend.edges(namespace, ids[start : start + _BATCH]):
            seen.setdefault(edge.key, edge)
    return sorted(seen.values(), key=lambda e: (e.created_at, e.key))


def _export_lines(
    memory: Engine, namespace: str, vectors: bool, agent_id: str | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    records = all_records(memory, namespace, vectors)
    if agent_id is not None:
        records = [r for r in records if visible_to(r, agent_id)]
    ids = [r.id for r in records]
    known = set(ids)
    for r in records:
        yield "record", r.to_dict(vectors=vectors)
    for e in edges_of(memory, namespace, ids):
        # An edge to a memory the reader may not see would reveal its id.
        if agent_id is None or all(
            end in known or end.startswith(ENTITY_PREFIX) for end in (e.src, e.dst)
        ):
            yield "edge", e.to_dict()
    for a in memory.backend.audit(namespace):
        if agent_id is None or a.memory_id in known:
            yield "audit", a.to_dict()


def export_namespace(
    memory: Engine,
    namespace: str,
    out: TextIO,
    *,
    vectors: bool = False,
    agent_id: str | None = None,
    passphrase: str | None = None,
) -> TransferStats:
    """Write one namespace as JSON Lines to ``out``.

    Args:
        memory: the memory to read.
        namespace: the tenant to export.
        out: a text stream (a file opened for writing, ``sys.stdout``...).
        vectors: include dense vectors (exact restore without re-embedding).
        agent_id: export only what this agent may see; ``None`` exports all.
        passphrase: encrypt every line after the header.

    Returns:
        The counts written.

    Raises:
        ImportError: a passphrase was given without the ``crypto`` extra.
    """
    check_namespace(namespace)
    header = {
        "namespace": namespace,
        "exported_at": now_ts(),
        "vectors": vectors,
        "embedder": memory.embedder.model_id,
        "dim": memory.embedder.dim,
    }
    writer = LineWriter(out, header, passphrase)
    for kind, data in _export_lines(memory, namespace, vectors, agent_id):
        writer.write(kind, data)
    writer.finish()
    return TransferStats(**writer.counts)


# -- import -----------------------------------------------------------------


def _retarget(items: list[Any], target: str) -> list[Any]:
    return [
        item if item.namespace == target else _renamed(item, target) for item in items
    ]


def _renamed(item: Any, namespace: str) -> Any:
    if isinstance(item, MemoryRecord):
        return item.replace(namespace=namespace)
    data = item.to_dict()
    data["namespace"] = namespace
    return type(item).from_dict(data)


def _embed_missing(memory: Engine, records: list[MemoryRecord]) -> int:
    dim = memory.embedder.dim
    todo = [r for r in records if len(r.dense) != dim]
    for start in range(0, len(todo), 64):
        batch = todo[start : start + 64]
        vectors = memory.embedder.embed([r.content for r in batch])
        for record, vector in zip(batch, vectors, strict=True):
            record.dense = [float(x) for x in vector]
    return len(todo)


def import_namespace(
    memory: Engine,
    lines: Iterable[str],
    *,
    namespace: str,
    passphrase: str | None = None,
) -> TransferStats:
    """Restore an export into ``namespace``: records (ids, versions, times), edges, audit.

    The target is always the caller's: the namespace named in the file only
    has to match the file's items, it never picks a tenant. The whole file is
    read and checked first (bindings, counts, duplicate ids, every store
    limit), so a bad file writes nothing. Records without vectors (or from
    another embedding model) are re-embedded. Importing the same file twice
    leaves one copy of everything, so an import cut off by a store failure is
    finished by running it again.

    Args:
        memory: the memory to write into.
        lines: the export's lines (an open file works).
        namespace: the tenant to write into.
        passphrase: for encrypted exports; giving one refuses a plaintext file.

    Returns:
        The counts written.

    Raises:
        ValueError: the file is invalid (nothing was written).
        StoreError: the store failed part-way; the note says to run again.

    Example:
        >>> with open("u42.jsonl") as fh:  # doctest: +SKIP
        ...     import_namespace(memory, fh, namespace="u42")
    """
    target = check_namespace(namespace)
    export = read_export(lines, passphrase=passphrase)
    records = _retarget(export.records, target)
    edges, audit = _retarget(export.edges, target), _retarget(export.audit, target)
    if export.header.get("embedder") != memory.embedder.model_id:
        for r in records:
            r.dense = []  # another model's vectors would mix vector spaces
    stats = TransferStats(reembedded=_embed_missing(memory, records))
    try:
        stats.audit = _write(memory.backend, target, records, edges, audit)
    except StoreError as exc:
        exc.add_note(
            f"import into {target!r} stopped part-way; importing the same file "
            "again finishes it (import is idempotent)"
        )
        raise
    stats.records, stats.edges = len(records), len(edges)
    return stats


def _write(
    backend: MemoryBackend,
    target: str,
    records: list[MemoryRecord],
    edges: list[Edge],
    audit: list[Any],
) -> int:
    """Write records, edges and new audit entries; returns how many entries were new."""
    for start in range(0, len(records), _BATCH):
        backend.upsert(target, records[start : start + _BATCH])
    backend.add_edges(target, edges)
    present = {a.id for a in backend.audit(target)}
    fresh = [a for a in audit if a.id not in present]
    backend.append_audit(target, fresh)
    backend.flush()
    return len(fresh)
