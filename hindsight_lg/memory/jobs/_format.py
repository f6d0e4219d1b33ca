"""The export file format: writing bound lines, reading and verifying a whole file.

Line 1 is the header (plain JSON, so a reader learns the salt and the
format). Every later line is ``{"type", "seq", "export", ...}``: ``seq`` its
position after the header (1, 2, ...) and ``export`` the header's random
``export_id``. The last line is ``end``, with the counts and the SHA-256 of the
header line. With a passphrase each later line is a Fernet token of that JSON,
so the binding is authenticated with the content: a line moved, repeated,
dropped or taken from another export fails its check, and an edited header
fails the end line's digest.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, TextIO

from hindsight_lg.backends.base import check_namespace
from hindsight_lg.memory.jobs._import_check import (
    check_audit,
    check_edge,
    check_record,
)
from hindsight_lg.model import AuditEntry, Edge, MemoryRecord

FORMAT = "hindsight-lg-export"
FORMAT_VERSION = 2  # 2: lines bound to their position and the export's id
SCRYPT = {"n": 2**15, "r": 8, "p": 1}
_KINDS = {"record": "records", "edge": "edges", "audit": "audit"}


def fernet(passphrase: str, salt: bytes) -> Any:
    """A Fernet for ``passphrase`` under ``salt`` (scrypt key derivation).

    Raises:
        ImportError: the ``crypto`` extra is not installed.
        ValueError: the passphrase is empty.
    """
    try:
        from cryptography.fernet import Fernet
        from cryptography.hazmat.primitives.kdf.scrypt import Scrypt
    except ImportError:
        raise ImportError(
            "encrypted exports need: pip install 'hindsight-lg[crypto]'"
        ) from None
    if not passphrase:
        raise ValueError("the passphrase must not be empty")
    kdf = Scrypt(salt=salt, length=32, **SCRYPT)
    return Fernet(base64.urlsafe_b64encode(kdf.derive(passphrase.encode())))


def _digest(header_line: str) -> str:
    return hashlib.sha256(header_line.rstrip("\r\n").encode()).hexdigest()


class LineWriter:
    """Writes the header, then lines bound to their position and this export.

    Args:
        out: the text stream to write.
        header: the header's fields (format, version, id and salt are added).
        passphrase: encrypt every line after the header.
    """

    def __init__(
        self, out: TextIO, header: dict[str, Any], passphrase: str | None
    ) -> None:
        self._out = out
        self._seq = 0
        self.counts = dict.fromkeys(_KINDS.values(), 0)
        self._id = os.urandom(16).hex()
        full = {"type": "header", "format": FORMAT, "version": FORMAT_VERSION}
        full.update(header, export_id=self._id)
        self._seal = None
        if passphrase is not None:
            salt = os.urandom(16)
            self._seal = fernet(passphrase, salt)
            full["encryption"] = {"kdf": "scrypt", "salt": salt.hex(), **SCRYPT}
        self._header = json.dumps(full, ensure_ascii=False)
        out.write(self._header + "\n")

    def write(self, kind: str, data: dict[str, Any]) -> None:
        """Write one record, edge or audit line."""
        self.counts[_KINDS[kind]] += 1
        self._line({"type": kind, "data": data})

    def finish(self) -> None:
        """Write the end line: counts and the header's digest."""
        digest = _digest(self._header)
        self._line({"type": "end", "counts": self.counts, "header": digest})

    def _line(self, item: dict[str, Any]) -> None:
        self._seq += 1
        text = json.dumps(
            {**item, "seq": self._seq, "export": self._id}, ensure_ascii=False
        )
        if self._seal is not None:
            text = self._seal.encrypt(text.encode()).decode("ascii")
        self._out.write(text + "\n")


# -- reading ----------------------------------------------------------------


@dataclass(slots=True)
class ExportFile:
    """A whole export, verified: its header and every item, in file order."""

    header: dict[str, Any]
    records: list[MemoryRecord] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    audit: list[AuditEntry] = field(default_factory=list)

    @property
    def namespace(self) -> str:
        """The namespace the file was exported from (never an import target)."""
        return str(self.header["namespace"])


def _header(first: str) -> dict[str, Any]:
    try:
        header = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        header = None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"not a {FORMAT} file (bad or missing header line)")
    if header.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"export format version {header.get('version')!r} is not supported "
            f"(this release reads version {FORMAT_VERSION}; export again with it)"
        )
    if not isinstance(header.get("export_id"), str) or not header["export_id"]:
        raise ValueError("the header has no export_id")
    check_namespace(header.get("namespace"))  # type: ignore[arg-type]
    return header


def _opener(header: dict[str, Any], passphrase: str | None) -> Any:
    enc = header.get("encryption")
    if enc is None:
        if passphrase is not None:
            # Whoever can swap the file can strip its encryption: a file that
            # should be sealed and is not is refused, not trusted.
            raise ValueError(
                "a passphrase was given but this export is not encrypted: "
                "refusing it (import a plaintext export without a passphrase)"
            )
        return None
    if passphrase is None:
        raise ValueError("this export is encrypted: give its passphrase")
    if not isinstance(enc, dict) or not isinstance(enc.get("salt"), str):
        raise ValueError("the export header's encryption block is malformed")
    try:
        salt = bytes.fromhex(enc["salt"])
    except ValueError:
        raise ValueError("the export header's salt is not hex") from None
    return fernet(passphrase, salt)


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
    except RecursionError:
        raise ValueError(f"line {lineno}: JSON nested too deeply") from None
    if not isinstance(item, dict) or not isinstance(item.get("type"), str):
        raise ValueError(f"line {lineno}: expected an object with a 'type'")
    return item


class _Reader:
    """Checks each line's binding, kind, namespace and uniqueness in turn."""

    def __init__(self, header: dict[str, Any], target: str | None) -> None:
        self.file = ExportFile(header)
        self.target = target
        self.seq = 0
        self.end: dict[str, Any] | None = None
        self._seen: dict[tuple[str, str], int] = {}

    def add(self, item: dict[str, Any], lineno: int) -> None:
        self.seq += 1
        if self.end is not None:
            raise ValueError(f"line {lineno}: data after the end line")
        if item.get("export") != self.file.header["export_id"]:
            raise ValueError(f"line {lineno}: the line belongs to another export")
        if item.get("seq") != self.seq:
            raise ValueError(
                f"line {lineno}: out of sequence (position {item.get('seq')!r} "
                f"where {self.seq} belongs): a line was moved, repeated or dropped"
            )
        kind = item["type"]
        if kind == "end":
            self.end = item
        elif kind in _KINDS:
            self._item(kind, item.get("data"), lineno)
        else:
            raise ValueError(f"line {lineno}: unknown line type {kind!r}")

    def _item(self, kind: str, data: Any, lineno: int) -> None:
        parsed: MemoryRecord | Edge | AuditEntry
        if kind == "record":
            parsed = check_record(data, lineno, self.target)
            self._once("record id", parsed.id, lineno)
            self.file.records.append(parsed)
        elif kind == "edge":
            parsed = check_edge(data, lineno)
            self._once("edge", parsed.key, lineno)
            self.file.edges.append(parsed)
        else:
            parsed = check_audit(data, lineno, self.target)
            self._once("audit entry id", parsed.id, lineno)
            self.file.audit.append(parsed)
        if parsed.namespace != self.file.namespace:
            raise ValueError(
                f"line {lineno}: the {kind} belongs to {parsed.namespace!r}, "
                f"not to the exported namespace {self.file.namespace!r}"
            )

    def _once(self, what: str, key: str, lineno: int) -> None:
        first = self._seen.setdefault((what, key), lineno)
        if first != lineno:
            raise ValueError(
                f"line {lineno}: duplicate {what} {key!r} (first on line {first})"
            )

    def finish(self, header_line: str) -> ExportFile:
        if self.end is None:
            raise ValueError("the export is cut short: it has no end line")
        f = self.file
        found = {
            "records": len(f.records),
            "edges": len(f.edges),
            "audit": len(f.audit),
        }
        if self.end.get("counts") != found:
            raise ValueError(
                f"the end line counts {self.end.get('counts')!r}, "
                f"the file holds {found}"
            )
        if self.end.get("header") != _digest(header_line):
            raise ValueError("the header was changed after export (digest mismatch)")
        return f


def read_export(
    lines: Iterable[str],
    *,
    passphrase: str | None = None,
    namespace: str | None = None,
) -> ExportFile:
    """Parse and verify a whole export before anything is written.

    Args:
        lines: the file's lines.
        passphrase: for encrypted exports; giving one refuses a plaintext file.
        namespace: the namespace the items will be written to, which sizes
            them (the longest allowed when not given).

    Returns:
        The header and every record, edge and audit entry.

    Raises:
        ValueError: the file is not an export, is cut short or reordered,
            fails to decrypt, repeats an id, or holds a malformed or oversized
            item (the message names the line).
    """
    it: Iterator[str] = iter(lines)
    first = next(it, "")
    reader = _Reader(_header(first), namespace)
    opener = _opener(reader.file.header, passphrase)
    for lineno, raw in enumerate(it, start=2):
        if raw.strip():
            reader.add(_decode(raw, opener, lineno), lineno)
    return reader.finish(first)
