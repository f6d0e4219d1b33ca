"""What every backend can store, and the checks that refuse the rest before a write.

The limits are the strictest backend's (a Milvus server's VARCHAR and JSON
fields), so a record one backend refuses fails the same way on every other,
at the write that made it, with the field named. Re-exported by
:mod:`hindsight_lg.backends.base`, where callers import them from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from hindsight_lg._text import describe_char, hidden_char
from hindsight_lg.model import ID_BYTES, AuditEntry, Edge, MemoryRecord

# Bytes of UTF-8, not characters: Milvus VARCHAR(512) fields count bytes, and a
# Milvus server refuses a longer value (Milvus Lite stores it), so every backend
# accepts exactly what the strictest one can store.
MAX_NAMESPACE_BYTES = 512
# What every backend must store, set by the strictest one (a Milvus server):
# ids (record ids, edge ends, audit memory ids) are VARCHAR(64); agent and
# thread ids VARCHAR(512); an audit op VARCHAR(32); and each stored document
# (a record without vectors, an edge, an audit entry) is one JSON field whose
# compact UTF-8 serialisation may not exceed 65,536 bytes.
MAX_ID_BYTES = ID_BYTES
MAX_NAME_BYTES = 512
MAX_OP_BYTES = 32
MAX_DOC_BYTES = 65536


def check_namespace(namespace: str) -> str:
    """Validate a namespace; returns it unchanged.

    Raises:
        ValueError: empty, longer than 512 bytes of UTF-8, or holding a
            character a reader cannot see (:func:`hindsight_lg._text.is_hidden`:
            controls, format and default-ignorable code points such as
            bidi marks, zero-width and variation selectors, Hangul fillers,
            tag characters, surrogates, private use, unassigned, and every
            space but U+0020).
        TypeError: not a string.
    """
    if not isinstance(namespace, str):
        raise TypeError(f"namespace must be a str, not {type(namespace).__name__}")
    if not namespace or not namespace.strip():
        raise ValueError("namespace must be a non-empty string (a user or tenant id)")
    hidden = hidden_char(namespace)
    if hidden is not None:
        # Such characters let two tenant ids look alike on screen (the panel,
        # the CLI, a log line) while they differ in storage.
        raise ValueError(
            f"namespace {ascii(namespace[:60])} holds {describe_char(hidden)}, "
            "a character that shows as nothing or as a plain space, so it "
            "would look like another tenant: remove it, or map user ids "
            "through hindsight_lg.tenancy.user_tenant(), which escapes such "
            "characters visibly"
        )
    size = len(namespace.encode("utf-8"))  # no surrogates left: cannot fail
    if size > MAX_NAMESPACE_BYTES:
        raise ValueError(
            f"namespace is {size} bytes of UTF-8, over the limit of "
            f"{MAX_NAMESPACE_BYTES} (a non-ASCII character takes 2 to 4 bytes): "
            "use a shorter tenant id, or a hash of a long one"
        )
    return namespace


# The largest text one field of a memory may hold (content, a correction, a
# store value's text): a quarter of the document, so content, its summary,
# the capture context and the metadata still fit one document together.
MAX_TEXT_BYTES = 16384
# Items of a record's lists (participants, entities, source ids) and speaker
# names, and how many of them one record keeps.
MAX_LABEL_BYTES = 512
MAX_LIST_ITEMS = 256


def utf8_size(text: str) -> int:
    """Bytes of ``text`` as stored (UTF-8; a lone surrogate counts 3)."""
    return len(text.encode("utf-8", "surrogatepass"))


def fit_id(value: str, limit: int = MAX_ID_BYTES) -> str:
    """``value`` when it fits ``limit`` bytes of UTF-8, else its head and a hash.

    Deterministic, so every writer and reader of a long id (an entity named
    by a pasted key or a long URL segment) reaches the same stored value.
    """
    data = value.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return value
    digest = hashlib.sha256(data).hexdigest()[:16]
    head = data[: limit - len(digest) - 1].decode("utf-8", "ignore")
    return f"{head}~{digest}"


def fit_label(value: str, limit: int = MAX_LABEL_BYTES) -> str:
    """A client's message name or id as a record keeps it: no NUL, ``limit`` bytes.

    Messages come from clients: a name is made to fit, never a reason to
    refuse the turn. A lone surrogate becomes ``?``; a cut never splits a
    character. Deterministic, so one message keeps one key.
    """
    data = value.replace("\x00", "").encode("utf-8", "replace")
    return data[:limit].decode("utf-8", "ignore")


def check_text(value: object, what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """Refuse text a memory cannot hold; returns it unchanged.

    Raises:
        TypeError: not a string.
        ValueError: NUL, a lone surrogate, or more than ``limit`` bytes.
    """
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{what} contains NUL bytes: binary data is not a memory")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError(
            f"{what} holds an unpaired surrogate (text decoded with errors?)"
        ) from None
    if size > limit:
        raise ValueError(
            f"{what} is {size} bytes of UTF-8, over the limit of {limit}: "
            "store a shorter text (split a document into several memories)"
        )
    return value


def check_labels(values: Sequence[str], what: str) -> list[str]:
    """Refuse a list of names or ids a record cannot keep; returns it as a list.

    Raises:
        TypeError: an item that is not a string.
        ValueError: more than 256 items, or an item with NUL, a lone
            surrogate or more than 512 bytes.
    """
    items = list(values)
    if len(items) > MAX_LIST_ITEMS:
        raise ValueError(f"{what}: {len(items)} items, over the limit of 256")
    for item in items:
        check_text(item, f"an item of {what}", MAX_LABEL_BYTES)
    return items


def _doc_size(doc: dict[str, object]) -> int:
    text = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    try:
        return len(text.encode("utf-8"))
    except UnicodeEncodeError:
        raise ValueError("it holds an unpaired surrogate") from None


def _check_doc(doc: dict[str, object], what: str) -> None:
    try:
        size = _doc_size(doc)
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"{what} cannot be stored as JSON ({exc})") from exc
    if size > MAX_DOC_BYTES:
        raise ValueError(
            f"{what} takes {size} bytes stored, over the limit of {MAX_DOC_BYTES} "
            "(content, summary, lists and meta together)"
        )


def _check_field(value: str, what: str, limit: int, *, empty: bool = False) -> None:
    if not empty and not value:
        raise ValueError(f"{what} must not be empty")
    if utf8_size(value) > limit:
        raise ValueError(f"{what} {value[:40]!r}... is over {limit} bytes of UTF-8")


def _encodable(value: str, what: str) -> None:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} holds an unpaired surrogate") from None


_RECORD_TEXTS = (
    "content",
    "summary",
    "goal",
    "action",
    "emotion",
    "namespace",
    "agent_id",
    "thread_id",
)


def check_record(record: MemoryRecord) -> None:
    """Refuse a record the strictest backend cannot store, before any write.

    Every backend calls it on ``upsert`` (the in-memory reference too), so
    a record that a Milvus server would refuse fails the same way
    everywhere, at the write that made it, with the field named.

    Raises:
        ValueError: an id over 64 bytes, an agent or thread id over 512,
            NUL in a text field, a lone surrogate anywhere, or a stored
            document over 65,536 bytes.
    """
    what = f"record {record.id[:40]!r}"
    for name in _RECORD_TEXTS:
        value = getattr(record, name)
        if "\x00" in value:
            # Export files and the import check refuse NUL in these fields:
            # what the store keeps must restore from its backup.
            raise ValueError(f"{what}: {name} contains NUL")
        _encodable(value, f"{what}: {name}")
    for items in (record.participants, record.entities, record.source_ids):
        for item in items:
            _encodable(item, f"{what}: a list item")
    _check_field(record.id, f"{what}: id", MAX_ID_BYTES)
    _check_field(record.agent_id, f"{what}: agent_id", MAX_NAME_BYTES, empty=True)
    _check_field(record.thread_id, f"{what}: thread_id", MAX_NAME_BYTES, empty=True)
    if record.superseded_by is not None:
        _check_field(record.superseded_by, f"{what}: superseded_by", MAX_ID_BYTES)
    if _record_bound(record) > MAX_DOC_BYTES:  # only then is the exact size needed
        _check_doc(record.to_dict(vectors=False), what)


# Numbers, enums and JSON punctuation of a record document, generously.
_RECORD_OVERHEAD = 2048


def _record_bound(record: MemoryRecord) -> int:
    """An upper bound of a record document's size, without serialising it.

    A character takes at most 6 bytes in JSON (``\\u0000``), a list item 3
    more (quotes and comma); ``meta`` is measured exactly.
    """
    chars = sum(
        len(text)
        for text in (
            record.content,
            record.summary,
            record.goal,
            record.action,
            record.emotion,
            record.namespace,
            record.agent_id,
            record.thread_id,
            record.id,
            record.superseded_by or "",
        )
    )
    for items in (record.participants, record.entities, record.source_ids):
        chars += sum(len(item) + 3 for item in items)
    try:
        meta = _doc_size(record.meta) if record.meta else 0
    except (TypeError, ValueError, RecursionError):
        return MAX_DOC_BYTES + 1  # the exact check says why
    return 6 * chars + meta + _RECORD_OVERHEAD


def check_edge(edge: Edge) -> None:
    """Refuse an edge the strictest backend cannot store (see :func:`check_record`).

    Raises:
        ValueError: an end over 64 bytes.
    """
    for end in (edge.src, edge.dst):
        _check_field(end, f"edge {edge.type.value}: end", MAX_ID_BYTES)


def check_audit(entry: AuditEntry) -> None:
    """Refuse an audit entry the strictest backend cannot store.

    Raises:
        ValueError: an id or memory id over 64 bytes, an op over 32, or a
            document over 65,536 bytes.
    """
    what = f"audit entry {entry.op[:32]!r}"
    _check_field(entry.id, f"{what}: id", MAX_ID_BYTES)
    _check_field(entry.memory_id, f"{what}: memory_id", MAX_ID_BYTES, empty=True)
    _check_field(entry.op, f"{what}: op", MAX_OP_BYTES)
    _check_doc(entry.to_dict(), what)


def check_writes(
    records: Sequence[MemoryRecord] = (),
    edges: Sequence[Edge] = (),
    audit: Sequence[AuditEntry] = (),
) -> None:
    """:func:`check_record`, :func:`check_edge` and :func:`check_audit` on each."""
    for record in records:
        check_record(record)
    for edge in edges:
        check_edge(edge)
    for entry in audit:
        check_audit(entry)
