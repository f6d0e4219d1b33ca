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

Ids survive import, except those of ``HindsightStore`` items: an item's id is
derived from its namespace and key (:func:`~hindsight_lg.model.store_item_id`),
so in another namespace it takes the id of its key there, and every reference
to it (edges, ``superseded_by``, ``derived_from``, audit entries) follows.
That is what lets ``get``, ``put`` and ``delete`` find the copy by its key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
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
from hindsight_lg.model import (
    ENTITY_PREFIX,
    STORE_META,
    AuditEntry,
    Edge,
    MemoryRecord,
    now_ts,
    store_item_id,
)

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


def _without_ids(value: Any, hidden: set[str]) -> Any:
    """``value`` without the strings in ``hidden`` (as values, items or keys' values)."""
    if isinstance(value, dict):
        return {
            k: _without_ids(v, hidden)
            for k, v in value.items()
            if not (isinstance(v, str) and v in hidden)
        }
    if isinstance(value, list):
        return [
            _without_ids(v, hidden)
            for v in value
            if not (isinstance(v, str) and v in hidden)
        ]
    return value


def _shown_record(record: MemoryRecord, hidden: set[str]) -> MemoryRecord:
    """The record as a reader sees it: no link to a memory hidden from it."""
    if not hidden or not (
        record.superseded_by in hidden or "derived_from" in record.meta
    ):
        return record
    shown = record.replace()
    if shown.superseded_by in hidden:
        shown.superseded_by = None
    if "derived_from" in shown.meta:
        shown.meta["derived_from"] = _without_ids(shown.meta["derived_from"], hidden)
    return shown


def _export_lines(
    memory: Engine, namespace: str, vectors: bool, agent_id: str | None
) -> Iterator[tuple[str, dict[str, Any]]]:
    records = all_records(memory, namespace, vectors)
    hidden: set[str] = set()
    if agent_id is not None:
        hidden = {r.id for r in records if not visible_to(r, agent_id)}
        records = [_shown_record(r, hidden) for r in records if r.id not in hidden]
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
        if agent_id is None:
            yield "audit", a.to_dict()
        elif a.memory_id in known:
            # Nor may an entry of a visible memory name a hidden one (the
            # memory a shared statement superseded, say).
            yield "audit", replace(a, detail=_without_ids(a.detail, hidden)).to_dict()


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


def _item_ids(records: list[MemoryRecord], target: str) -> dict[str, str]:
    """Old id -> new id of the store items whose id their key gives in ``target``.

    Raises:
        ValueError: two records of the file would share an id in ``target``.
    """
    moved = {}
    for r in records:
        stored = r.meta.get(STORE_META)
        key = stored.get("key") if isinstance(stored, dict) else None
        if isinstance(key, str) and store_item_id(target, key) != r.id:
            moved[r.id] = store_item_id(target, key)
    ids = [moved.get(r.id, r.id) for r in records]
    if len(set(ids)) != len(ids):
        raise ValueError(
            f"two records of the file would share an id in {target!r} (a store "
            "item's id comes from its key): remove the duplicate and import again"
        )
    return moved


def _renamed_ids(value: Any, moved: dict[str, str]) -> Any:
    """``value`` with every string that is a moved id replaced by the new one."""
    if isinstance(value, str):
        return moved.get(value, value)
    if isinstance(value, list):
        return [_renamed_ids(v, moved) for v in value]
    if isinstance(value, dict):
        return {k: _renamed_ids(v, moved) for k, v in value.items()}
    return value


def _rekey(
    records: list[MemoryRecord],
    edges: list[Edge],
    audit: list[AuditEntry],
    moved: dict[str, str],
) -> tuple[list[MemoryRecord], list[Edge], list[AuditEntry]]:
    """Records, edges and audit entries with the moved ids replaced everywhere."""
    if not moved:
        return records, edges, audit
    for r in records:
        r.id = moved.get(r.id, r.id)
        if r.superseded_by is not None:
            r.superseded_by = moved.get(r.superseded_by, r.superseded_by)
        if "derived_from" in r.meta:
            r.meta["derived_from"] = _renamed_ids(r.meta["derived_from"], moved)
    edges = [
        replace(e, src=moved.get(e.src, e.src), dst=moved.get(e.dst, e.dst))
        for e in edges
    ]
    audit = [
        replace(
            a,
            memory_id=moved.get(a.memory_id, a.memory_id),
            detail=_renamed_ids(a.detail, moved),
        )
        for a in audit
    ]
    return records, edges, audit


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
    memory: Engine | Callable[[], Engine],
    lines: Iterable[str],
    *,
    namespace: str,
    passphrase: str | None = None,
) -> TransferStats:
    """Restore an export into ``namespace``: records (ids, versions, times), edges, audit.

    The target is always the caller's: the namespace named in the file only
    has to match the file's items, it never picks a tenant. A store item
    takes the id its key has in ``namespace`` (references follow), so the
    store finds the copy by its key. The whole file is read and checked first
    (bindings, counts, duplicate ids, every store limit), so a bad file writes
    nothing. Given a function that opens the memory, it is called only then:
    a bad file opens nothing either, so no store, spool or lock file is
    created for it (the CLI's ``import`` passes one). Records without vectors
    (or from another embedding model) are re-embedded. Importing the same file twice
    leaves one copy of everything, so an import cut off by a store failure is
    finished by running it again.

    Args:
        memory: the memory to write into, or a function that opens it.
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
    export = read_export(lines, passphrase=passphrase, namespace=target)
    if callable(memory):
        memory = memory()
    records, edges, audit = _rekey(
        _retarget(export.records, target),
        _retarget(export.edges, target),
        _retarget(export.audit, target),
        _item_ids(export.records, target),
    )
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
