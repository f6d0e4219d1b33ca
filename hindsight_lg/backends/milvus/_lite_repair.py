"""Repair of a Milvus Lite collection a crash left torn: its index, its creation.

Milvus Lite 3.2 keeps a collection crash-safe where it matters: the WAL is
read back up to its last valid batch, the manifest is replaced atomically, and
a Parquet data or delta file joins the manifest only once it is fully written
(recovery deletes the ones that never did). Index sidecars (``*.idx`` for
vectors, ``*.sidx`` for scalars) are the exception: they are written in place,
so a process killed mid-write leaves a truncated one, and every later
``load_collection`` fails reading it ("No data left in file", "read error in
... .idx"). A sidecar is derived data: when it is missing, load builds it again
from the segment's Parquet file and writes it anew. Removing the collection's
sidecars and loading once more is therefore a complete repair that cannot lose
a record.

Creation has one torn state too. Milvus Lite makes a collection's directory,
then writes its schema file atomically, and a collection exists exactly when
that file does. A process killed between the two leaves a directory that no
listing shows and that every later creation refuses ("File exists"). Nothing
but the schema's temporary file is ever written there before the schema, so
removing the directory loses nothing.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

from hindsight_lg.errors import StoreError, StoreUnavailable
from hindsight_lg.telemetry import get_logger

# Milvus Lite's own names for them (milvus_lite.index.files and
# milvus_lite.db), kept here so the repair never imports the server's internals.
SIDECAR_SUFFIXES = (".idx", ".sidx")
SCHEMA_FILE = "schema.json"


def collection_dir(uri: str, name: str) -> Path:
    """The directory Milvus Lite keeps collection ``name`` of file ``uri`` in."""
    return Path(os.path.abspath(Path(uri).expanduser())) / "collections" / name


def index_sidecars(directory: Path) -> list[Path]:
    """Every index sidecar of the collection in ``directory``, all partitions."""
    return sorted(
        path
        for path in directory.glob("partitions/*/indexes/*")
        if path.suffix in SIDECAR_SUFFIXES and path.is_file()
    )


def remove_index_sidecars(uri: str, name: str, cause: StoreError) -> list[Path]:
    """Remove the index sidecars of collection ``name``; Milvus Lite rebuilds them.

    All of them go, not only the torn one: the error does not always name the
    file ("No data left in file"), and telling a torn FAISS or NPY file from a
    whole one would mean parsing Milvus Lite's private formats. The cost is one
    index build per segment on the next load. Data, delta, WAL and manifest
    files are never touched.

    Returns:
        The removed paths (empty when the collection has no sidecar).
    """
    removed = []
    for path in index_sidecars(collection_dir(uri, name)):
        path.unlink(missing_ok=True)
        removed.append(path)
    if removed:
        get_logger().warning(
            "lite_index_sidecars_removed",
            collection=name,
            removed=[str(p) for p in removed],
            cause=str(cause),
        )
    return removed


def unreadable(uri: str, name: str, exc: StoreError) -> StoreUnavailable:
    """The error for a collection that still fails to load once sidecars are gone."""
    directory = collection_dir(uri, name)
    named = re.search(re.escape(str(directory)) + r"[^\s'\":,]*", str(exc))
    path = named.group(0) if named else str(directory)
    return StoreUnavailable(
        f"loading collection {name}: Milvus Lite cannot read {path}, even with its "
        "index files rebuilt. Restore the store from an export (`hindsight-lg "
        f"import`) or from a backup of {uri}. Cause: {str(exc)[:300]}"
    )


def remove_torn_creation(uri: str, name: str) -> bool:
    """Remove collection ``name``'s directory if its creation never finished.

    Call it only for a collection the listing lacks, just before creating it.
    A directory that holds anything besides the schema's temporary file is
    not a torn creation but a damaged collection: it is left as it is.

    Returns:
        Whether a torn creation was removed.

    Raises:
        StoreUnavailable: The directory holds files of a collection whose
            schema file is gone.
    """
    directory = collection_dir(uri, name)
    if not directory.is_dir() or (directory / SCHEMA_FILE).exists():
        return False
    held = sorted(p.name for p in directory.iterdir())
    if set(held) - {SCHEMA_FILE + ".tmp"}:
        raise StoreUnavailable(
            f"creating collection {name}: {directory} holds {', '.join(held[:5])} "
            f"but no {SCHEMA_FILE}, so Milvus Lite cannot open it and will not "
            "replace it. Restore the store from an export (`hindsight-lg import`) "
            f"or from a backup of {uri}; nothing was deleted."
        )
    shutil.rmtree(directory)
    get_logger().warning("lite_torn_collection_removed", collection=name, held=held)
    return True
