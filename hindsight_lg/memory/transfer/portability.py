"""Export and import of one namespace (verified forgetting: ``lifecycle.erasure``).

The export format is JSON Lines: a header, then one line per record, edge and
audit entry, then an ``end`` line with the counts (a file cut short is caught,
not half-imported). Vectors are optional: without them, import re-embeds the
content with the importing memory's embedder.

With a passphrase, every line after the header is a Fernet token (AES-128-CBC +
HMAC-SHA256) under a key derived from the passphrase with scrypt; the header
holds the salt. That needs ``pip install 'hindsight-lg[crypto]'``.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

from hindsight_lg.backends.base import Where, check_namespace, visible_to
from hindsight_lg.memory.transfer._import_check import (
    check_audit,
    check_edge,
    check_record,
)
from hindsight_lg.model import AuditEntry, Edge, MemoryRecord, now_ts

FORMAT = "hindsight-lg-export"
FORMAT_VERSION = 1
_SCRYPT = {"n": 2**15, "r": 8, "p": 1}
_BATCH = 500


class _Memory(Protocol):
    """The parts of :class:`~hindsight_lg.HindsightMemory` this module uses."""

    backend: Any
    embedder: Any


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


def _fernet(passphrase: str, salt: bytes) -> Any:
    try:
        from cryptography.fernet import Fernet
        from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
    except ImportError:
        raise ImportError(
            "encrypted exports need: pip install 'hindsight-lg[crypto]'"
        ) from None
    if not passphrase:
        raise ValueError("the passphrase must not be empty")
    kdf = Scrypt(salt=salt, length=32, **_SCRYPT)
    return Fernet(base64.urlsafe_b64encode(kdf.derive(passphrase.encode())))


# -- export -----------------------------------------------------------------


def all_records(memory: _Memory, namespace: str, vectors: bool) -> list[MemoryRecord]:
    """Every record of a namespace, whatever its status."""
    where = Where(statuses=())  # every status, deleted included: exact restore
    return list(memory.backend.query(namespace, where, limit=10**7, vectors=vectors))


def edges_of(memory: _Memory, namespace: str, ids: list[str]) -> list[Edge]:
    """Edges touching ``ids``, each once, oldest first."""
    # One query per batch of ids: never the whole graph at once.
    seen: dict[str, Edge] = {}
    for start in range(0, len(ids), _BATCH):
        for edge in memory.backend.edges(namespace, ids[start : start + _BATCH]):
            seen.setdefault(edge.key, edge)
    return sorted(seen.values(), key=lambda e: (e.created_at, e.key))


def _export_lines(
    memory: _Memory, namespace: str, vectors: bool, agent_id: str | None
) -> Iterator[dict[str, Any]]:
    records = all_records(memory, namespace, vectors)
    if agent_id is not None:
        records = [r for r in records if visible_to(r, agent_id)]
    ids = [r.id for r in records]
    known = set(ids)
    for r in records:
        yield {"type": "record", "data": r.to_dict(vectors=vectors)}
    for e in edges_of(memory, namespace, ids):
        # An edge to a memory the reader may not see would reveal its id.
        if agent_id is None or all(
            end in known or end.startswith("entity:") for end in (e.src, e.dst)
        ):
            yield {"type": "edge", "data": e.to_dict()}
    for a in memory.backend.audit(namespace):
        if agent_id is None or a.memory_id in known:
            yield {"type": "audit", "data": a.to_dict()}


def export_namespace(
    memory: _Memory,
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
    header: dict[str, Any] = {
        "type": "header",
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "namespace": namespace,
        "exported_at": now_ts(),
        "vectors": vectors,
        "embedder": memory.embedder.model_id,
        "dim": memory.embedder.dim,
    }
    seal = None
    if passphrase is not None:
        salt = os.urandom(16)
        seal = _fernet(passphrase, salt)
        header["encryption"] = {"kdf": "scrypt", "salt": salt.hex(), **_SCRYPT}
    out.write(json.dumps(header, ensure_ascii=False) + "\n")
    stats = TransferStats()
    for line in _export_lines(memory, namespace, vectors, agent_id):
        _count(stats, line["type"])
        _write(out, line, seal)
    _write(out, {"type": "end", "counts": stats.as_dict()}, seal)
    return stats


def _count(stats: TransferStats, kind: str) -> None:
    name = {"record": "records", "edge": "edges", "audit": "audit"}[kind]
    setattr(stats, name, getattr(stats, name) + 1)


def _write(out: TextIO, line: dict[str, Any], seal: Any) -> None:
    text = json.dumps(line, ensure_ascii=False)
    if seal is not None:
        text = seal.encrypt(text.encode()).decode("ascii")
    out.write(text + "\n")


# -- import -----------------------------------------------------------------


def _header(first: str) -> dict[str, Any]:
    try:
        header = json.loads(first)
    except json.JSONDecodeError:
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file (bad or missing header line)")
    if header.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"export format version {header.get('version')!r} is not supported "
            f"(this release reads version {FORMAT_VERSION})"
        )
    check_namespace(header.get("namespace"))  # type: ignore[arg-type]
    return header


def _opener(header: dict[str, Any], passphrase: str | None) -> Any:
    enc = header.get("encryption")
    if enc is None:
        return None
    if passphrase is None:
        raise ValueError("this export is encrypted: give its passphrase")
    if not isinstance(enc, dict) or not isinstance(enc.get("salt"), str):
        raise ValueError("the export header's encryption block is malformed")
    return _fernet(passphrase, bytes.fromhex(enc["salt"]))


def _decode(raw: str, opener: Any, lineno: int) -> dict[str, Any]:
    text = raw.strip()
    if opener is not None:
        from cryptography.fernet import InvalidToken

        try:
            text = opener.decrypt(text.encode("ascii")).decode()
        except (InvalidToken, UnicodeError) as exc:
            raise ValueError(
                f"line {lineno}: cannot decrypt (wrong passphrase or corrupt file)"
            ) from exc
    try:
        item = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"line {lineno}: not JSON ({exc.msg})") from exc
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        raise ValueError(f"line {lineno}: expected an object with a 'type'")
    return item


def read_export(
    lines: Iterable[str], *, passphrase: str | None = None
) -> tuple[dict[str, Any], list[MemoryRecord], list[Edge], list[AuditEntry]]:
    """Parse and validate a whole export before anything is written.

    Args:
        lines: the file's lines.
        passphrase: for encrypted exports.

    Returns:
        The header, records, edges and audit entries.

    Raises:
        ValueError: the file is not an export, is cut short, fails to decrypt,
            or holds a malformed line (the message names the line).
    """
    it = iter(lines)
    header = _header(next(it, ""))
    opener = _opener(header, passphrase)
    records, edges, audit = [], [], []
    end = None
    for lineno, raw in enumerate(it, start=2):
        if not raw.strip():
            continue
        if end is not None:
            raise ValueError(f"line {lineno}: data after the end line")
        item = _decode(raw, opener, lineno)
        kind, data = item["type"], item.get("data")
        if kind == "record":
            records.append(check_record(data, lineno))
        elif kind == "edge":
            edges.append(check_edge(data, lineno))
        elif kind == "audit":
            audit.append(check_audit(data, lineno))
        elif kind == "end":
            end = item.get("counts")
        else:
            raise ValueError(f"line {lineno}: unknown line type {kind!r}")
    expected = {"records": len(records), "edges": len(edges), "audit": len(audit)}
    if not isinstance(end, dict) or any(end.get(k) != v for k, v in expected.items()):
        raise ValueError("the export is cut short or its counts do not match")
    return header, records, edges, audit


def _retarget(items: list[Any], source: str, target: str) -> list[Any]:
    out = []
    for item in items:
        if item.namespace != source:
            raise ValueError(f"an item belongs to {item.namespace!r}, not {source!r}")
        out.append(item if source == target else _renamed(item, target))
    return out


def _renamed(item: Any, namespace: str) -> Any:
    if isinstance(item, MemoryRecord):
        return item.replace(namespace=namespace)
    data = item.to_dict()
    data["namespace"] = namespace
    return type(item).from_dict(data)


def _embed_missing(memory: _Memory, records: list[MemoryRecord]) -> int:
    dim = memory.embedder.dim
    todo = [r for r in records if len(r.dense) != dim]
    for start in range(0, len(todo), 64):
        batch = todo[start : start + 64]
        vectors = memory.embedder.embed([r.content for r in batch])
        for record, vector in zip(batch, vectors, strict=True):
            record.dense = [float(x) for x in vector]
    return len(todo)


def import_namespace(
    memory: _Memory,
    lines: Iterable[str],
    *,
    namespace: str | None = None,
    passphrase: str | None = None,
) -> TransferStats:
    """Restore an export: records (ids, versions, times), edges and audit.

    The whole file is validated first, so a bad file writes nothing. Records
    without vectors (or with vectors of another dimension) are re-embedded.
    Importing the same file twice leaves one copy of everything.

    Args:
        memory: the memory to write into.
        lines: the export's lines (an open file works).
        namespace: import under this namespace instead of the exported one.
        passphrase: for encrypted exports.

    Returns:
        The counts written.

    Raises:
        ValueError: the file is invalid (nothing was written).
    """
    header, records, edges, audit = read_export(lines, passphrase=passphrase)
    source = header["namespace"]
    target = check_namespace(namespace or source)
    records = _retarget(records, source, target)
    edges, audit = _retarget(edges, source, target), _retarget(audit, source, target)
    if header.get("embedder") != memory.embedder.model_id:
        for r in records:
            r.dense = []  # another model's vectors would mix vector spaces
    stats = TransferStats(reembedded=_embed_missing(memory, records))
    backend = memory.backend
    for start in range(0, len(records), _BATCH):
        backend.upsert(target, records[start : start + _BATCH])
    backend.add_edges(target, edges)
    present = {a.id for a in backend.audit(target)}
    fresh = [a for a in audit if a.id not in present]
    backend.append_audit(target, fresh)
    backend.flush()
    stats.records, stats.edges, stats.audit = len(records), len(edges), len(fresh)
    return stats
