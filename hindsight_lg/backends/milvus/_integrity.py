"""A Milvus Lite store that lost its data says so instead of opening empty.

Milvus Lite trusts its files. When a collection's ``manifest.json`` does not
parse, it falls back to ``manifest.json.prev`` and, during recovery, deletes
every data file that manifest does not list: the newest segments are gone and
the collection opens with fewer rows, or none, as if nothing had happened. A
data file removed by hand is only a log warning. Two defences, both outside
Milvus Lite's own files:

1. **Before opening** (:func:`check_manifests`): every collection's
   ``manifest.json`` must parse and list only files that exist. A manifest
   that does not (or a missing one next to a ``.prev``) raises
   :class:`~hindsight_lg.errors.StoreUnavailable` *before* Milvus Lite reads
   it, so its recovery never runs and no data file is deleted.
2. **A row ledger** (:class:`RowLedger`, ``hindsight_rows.json`` in the store's
   directory): an exact row count of each collection, raised at ``setup()``
   and clean ``close()`` once a collection grew by a quarter. Opening finds
   fewer rows than recorded: the store lost data, and ``StoreUnavailable``
   says which collection and how many.

The ledger holds a lower bound: rows are added freely, and every delete or
drop through the backend lowers (or clears) the record *before* it runs, so a
crash anywhere leaves the record at or below the truth and a healthy store is
never reported damaged. The file is replaced atomically (write, fsync, rename,
directory fsync) and carries a CRC-32 of its body; a ledger that does not
verify is itself damage.

Limits: rows written since the last ``setup()`` or ``close()`` are not yet
covered (a crash there is Milvus Lite's WAL's business), and a store deleted
whole, ledger included, opens empty. Cost: one metadata ``count(*)`` per
collection at open and close (milliseconds: it counts upserted and deleted
rows until a compaction, so it is an upper bound and never the record); an
exact count, a scan, only where a collection grew by a quarter since its
record or reads below it; one small file write per delete call.
"""

from __future__ import annotations

import json
import os
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from hindsight_lg._files import remove_stale_temps, replace_private
from hindsight_lg.errors import StoreUnavailable

LEDGER = "hindsight_rows.json"


def _restore_hint(uri: str) -> str:
    return (
        f"Nothing was opened, so Milvus Lite removed no file: copy {uri} before "
        "any repair, then restore it from a backup or import an export "
        "(`hindsight-lg import`)."
    )


def _manifest_problem(directory: Path) -> str | None:
    manifest, prev = directory / "manifest.json", directory / "manifest.json.prev"
    if not manifest.exists():
        # Milvus Lite replaces the manifest by rename: it is never missing
        # while its backup exists, unless something removed it.
        return "manifest.json is missing" if prev.exists() else None
    try:
        doc = json.loads(manifest.read_text(encoding="utf-8"))
        listed = [
            directory / "partitions" / part / name
            for part, contents in doc["partitions"].items()
            for kind in ("data_files", "delta_files")
            for name in contents.get(kind, [])
        ]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        return f"manifest.json is unreadable ({type(exc).__name__}: {exc})"[:300]
    missing = [str(path.relative_to(directory)) for path in listed if not path.exists()]
    if missing:
        return f"manifest.json lists data files that are gone: {missing[:3]}"
    return None


def check_manifests(uri: str) -> None:
    """Refuse to open a Milvus Lite store whose manifests are damaged.

    Raises:
        StoreUnavailable: a collection's manifest does not parse, is missing
            beside its ``.prev`` backup, or lists a data file that is gone.
    """
    root = Path(os.path.abspath(Path(uri).expanduser())) / "collections"
    if not root.is_dir():
        return
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        problem = _manifest_problem(directory)
        if problem is not None:
            raise StoreUnavailable(
                f"the Milvus Lite store {uri} is damaged: collection "
                f"{directory.name}: {problem}. Opening it would make Milvus Lite "
                "fall back to an older manifest and delete the newer data files. "
                + _restore_hint(uri)
            )


class RowLedger:
    """Row counts of a Milvus Lite store's collections, kept beside its data.

    Args:
        uri: the Milvus Lite store (a directory).
        lock: the file's one ledger lock in this process (its ``LiteFile``'s):
            two backends on one store must not interleave a count-and-record
            with a lower-and-delete.
    """

    def __init__(self, uri: str, lock: threading.Lock) -> None:
        self.uri = uri
        self.path = Path(os.path.abspath(Path(uri).expanduser())) / LEDGER
        self.lock = lock

    def read(self) -> dict[str, int]:
        """The recorded counts (empty before the first record).

        Raises:
            StoreUnavailable: the ledger exists but does not verify.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return {}
        try:
            doc = json.loads(raw)
            body = json.dumps(doc["rows"], sort_keys=True).encode()
            if doc["crc32"] != zlib.crc32(body):
                raise ValueError("checksum mismatch")
            return {str(k): int(v) for k, v in doc["rows"].items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreUnavailable(
                f"{self.path} (the row counts hindsight-lg keeps for {self.uri}) "
                f"is damaged ({exc}), so the store cannot be checked for lost "
                "data. If you trust the store, delete that file and open again; "
                "otherwise restore from a backup or an export."
            ) from exc

    def write(self, rows: dict[str, int]) -> None:
        """Replace the ledger atomically and durably."""
        body = json.dumps(rows, sort_keys=True)
        doc = {"rows": rows, "crc32": zlib.crc32(body.encode())}
        # 0600 through an exclusive temporary file: see hindsight_lg._files.
        replace_private(self.path, json.dumps(doc, sort_keys=True).encode())

    def remove_leftovers(self) -> None:
        """Remove temporary files a killed :meth:`write` left (call before any write)."""
        remove_stale_temps(self.path)

    def verify(self, counts: dict[str, int]) -> None:
        """Raise when a collection holds fewer rows than recorded.

        Raises:
            StoreUnavailable: naming each collection that lost rows.
        """
        recorded = self.read()
        lost = {
            name: (recorded[name], counts.get(name, 0))
            for name in sorted(recorded)
            if name in counts and counts[name] < recorded[name]
        }
        if lost:
            detail = "; ".join(
                f"{name} holds {now} rows, {was} were stored"
                for name, (was, now) in lost.items()
            )
            raise StoreUnavailable(
                f"the Milvus Lite store {self.uri} lost data: {detail}. "
                + _restore_hint(self.uri)
                + f" To accept the store as it is, delete {self.path}."
            )

    def record(self, counts: dict[str, int]) -> None:
        """Record ``counts`` (other collections' records are kept)."""
        self.write({**self.read(), **counts})

    @contextmanager
    def shrinking(self, name: str, rows: int | None) -> Iterator[None]:
        """Lower ``name``'s record by ``rows`` (``None``: forget it), then run the block."""
        with self.lock:
            recorded = self.read()
            if name in recorded:
                if rows is None:
                    del recorded[name]
                else:
                    recorded[name] = max(0, recorded[name] - rows)
                self.write(recorded)
            yield


def deleted_rows(args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
    """An upper bound of the rows a client ``delete`` call removes."""
    ids = kwargs.get("ids", args[1] if len(args) > 1 else None)
    if ids is None:  # a delete by filter: no bound without reading
        return 1 << 62
    return len(ids) if isinstance(ids, (list, tuple)) else 1
