"""The memory model: one record type, typed weighted edges, audit entries.

Times are POSIX seconds (UTC floats) everywhere inside the engine: the scoring
maths needs differences, and Milvus stores them as plain numbers. Use
:func:`to_datetime` for display.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypeVar

# ``meta`` key of the rest of the turn an event was split from: searched by the
# lexical paths with the event's own words, never shown in a prompt.
CONTEXT_KEY = "context"
# The text of the turn an event was split from, shown around it at recall.
TURN_KEY = "turn"


_E = TypeVar("_E", bound=StrEnum)


def _member(enum: type[_E], value: Any) -> _E:
    """``enum(value)`` with a dictionary lookup first.

    Loading a namespace builds thousands of records from stored strings, and
    ``Enum.__call__`` costs several times a lookup.
    """
    try:
        found = enum._value2member_map_.get(value)
    except TypeError:  # unhashable: let the enum say why it is no member
        found = None
    return found if found is not None else enum(value)  # type: ignore[return-value]


class Kind(StrEnum):
    """What a memory is about; decides its half-life and seed importance."""

    PREFERENCE = "preference"
    FACT = "fact"
    TASK = "task"
    EVENT = "event"
    QUERY = "query"
    EMOTION = "emotion"
    EXPERIENCE = "experience"
    RULE = "rule"


class Tier(StrEnum):
    """Where a memory lives: the thread, episodes, or durable knowledge."""

    WORKING = "working"
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class Status(StrEnum):
    """Lifecycle state; only ``active`` memories are recalled by default."""

    ACTIVE = "active"
    COLD = "cold"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"
    DELETED = "deleted"


class Scope(StrEnum):
    """Who may see a memory besides its namespace's owner agent."""

    PRIVATE = "private"
    TEAM = "team"
    GLOBAL = "global"


class SourceKind(StrEnum):
    """How much the memory's source can be trusted."""

    USER_CONFIRMED = "user-confirmed"
    USER_SPECULATION = "user-speculation"
    THIRD_PARTY = "third-party"
    AGENT_INFERRED = "agent-inferred"


class EdgeType(StrEnum):
    """Typed, directed relations between memories (or a memory and an entity)."""

    CAUSES = "causes"
    CONTRADICTS = "contradicts"
    SUPERSEDES = "supersedes"
    SUPPLEMENTS = "supplements"
    PRECEDES = "precedes"
    DERIVED_FROM = "derived_from"
    MENTIONS = "mentions"
    SEMANTIC = "semantic"


def now_ts() -> float:
    """Current time as POSIX seconds."""
    return datetime.now(UTC).timestamp()


def to_datetime(ts: float) -> datetime:
    """POSIX seconds to an aware UTC datetime."""
    return datetime.fromtimestamp(ts, UTC)


def new_id() -> str:
    """A fresh memory id (32 hex chars, sortable enough for humans to tell apart)."""
    return uuid.uuid4().hex


@dataclass(slots=True)
class MemoryRecord:
    """One memory: an event, fact, preference, rule or lesson, with its metadata.

    Example:
        >>> r = MemoryRecord(namespace="u42", content="Prefers tea over coffee",
        ...                  kind=Kind.PREFERENCE)
        >>> r.status
        <Status.ACTIVE: 'active'>
    """

    namespace: str
    content: str
    kind: Kind = Kind.EVENT
    id: str = field(default_factory=new_id)
    agent_id: str = ""
    scope: Scope = Scope.PRIVATE
    tier: Tier = Tier.EPISODIC
    summary: str = ""
    dense: list[float] = field(default_factory=list, repr=False)
    sparse: dict[int, float] = field(default_factory=dict, repr=False)
    event_time: float = field(default_factory=now_ts)
    created_at: float = field(default_factory=now_ts)
    last_accessed_at: float = 0.0
    valid_until: float | None = None
    importance: float = 0.5
    confidence: float = 1.0
    strength: float = 1.0
    half_life_days: float = 14.0
    access_count: int = 0
    status: Status = Status.ACTIVE
    superseded_by: str | None = None
    version: int = 1
    participants: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    goal: str = ""
    action: str = ""
    emotion: str = ""
    source_kind: SourceKind = SourceKind.USER_CONFIRMED
    thread_id: str = ""
    source_ids: list[str] = field(default_factory=list)
    salience: float = 0.5
    mentioned_time: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.kind = _member(Kind, self.kind)
        self.scope = _member(Scope, self.scope)
        self.tier = _member(Tier, self.tier)
        self.status = _member(Status, self.status)
        self.source_kind = _member(SourceKind, self.source_kind)

    def to_dict(self, *, vectors: bool = True) -> dict[str, Any]:
        """Plain JSON-ready dict; enums become their string values."""
        # Shallow copies by hand: dataclasses.asdict deep-copies every float of
        # the vector, which dominated the cost of writing a record.
        skip = () if vectors else ("dense", "sparse")
        data: dict[str, Any] = {}
        for f in _RECORD_FIELDS:
            if f in skip:
                continue
            value = getattr(self, f)
            if isinstance(value, StrEnum):
                value = value.value
            elif isinstance(value, list):
                value = list(value)
            elif isinstance(value, dict):
                value = copy.deepcopy(value) if f == "meta" else dict(value)
            data[f] = value
        if vectors:
            data["sparse"] = {str(k): v for k, v in self.sparse.items()}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MemoryRecord:
        """Inverse of :meth:`to_dict`; unknown keys are kept in ``meta``."""
        known = {k: v for k, v in data.items() if k in _RECORD_NAMES}
        extra = {k: v for k, v in data.items() if k not in _RECORD_NAMES}
        if "sparse" in known:
            known["sparse"] = {int(k): float(v) for k, v in known["sparse"].items()}
        record = cls(**known)
        record.meta.update(extra)
        return record

    def replace(self, **changes: Any) -> MemoryRecord:
        """A copy with ``changes`` applied (lists and dicts are copied too)."""
        # Not dataclasses.replace: a recall copies every record it reads from
        # the cache, and __init__ (or a getattr/setattr loop) costs 5x more.
        copied = _copy_fields(self)
        if not changes:
            return copied
        unknown = set(changes) - _RECORD_NAMES
        if unknown:
            raise TypeError(f"MemoryRecord has no field {sorted(unknown)[0]!r}")
        for name, value in changes.items():
            setattr(copied, name, value)
        copied.__post_init__()
        return copied


_RECORD_FIELDS = tuple(f.name for f in dataclasses.fields(MemoryRecord))
_RECORD_NAMES = frozenset(_RECORD_FIELDS)


def _copier() -> Callable[[MemoryRecord], MemoryRecord]:
    # One assignment per field, generated as dataclasses generates __init__:
    # about 2 us a record against 8-10 for a loop over the field names.
    # The lists and the dict are copied too, so no copy shares them.
    body = "".join(
        f"    c.{name} = {_OWN.get(name, '')}(r.{name})\n" for name in _RECORD_FIELDS
    )
    source = f"def copy(r):\n    c = new(cls)\n{body}    return c\n"
    scope: dict[str, Any] = {"new": object.__new__, "cls": MemoryRecord}
    exec(source, scope)  # generated from the dataclass's own field names
    copy: Callable[[MemoryRecord], MemoryRecord] = scope["copy"]
    return copy


_OWN = {
    "participants": "list",
    "entities": "list",
    "source_ids": "list",
    "meta": "dict",
}
_copy_fields = _copier()


@dataclass(frozen=True, slots=True)
class Edge:
    """A typed, weighted, directed relation ``src -[type]-> dst`` in one namespace."""

    namespace: str
    src: str
    dst: str
    type: EdgeType
    weight: float = 1.0
    created_at: float = field(default_factory=now_ts)

    @property
    def key(self) -> str:
        """Stable identity: one edge per (src, type, dst)."""
        return f"{self.src}:{self.type.value}:{self.dst}"

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return {
            "namespace": self.namespace,
            "src": self.src,
            "dst": self.dst,
            "type": self.type.value,
            "weight": self.weight,
            "created_at": self.created_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Edge:
        """Inverse of :meth:`to_dict`."""
        return cls(
            namespace=data["namespace"],
            src=data["src"],
            dst=data["dst"],
            type=EdgeType(data["type"]),
            weight=float(data.get("weight", 1.0)),
            created_at=float(data.get("created_at", now_ts())),
        )


@dataclass(frozen=True, slots=True)
class AuditEntry:
    """One write to a memory: what happened, when, and with which detail."""

    namespace: str
    memory_id: str
    op: str
    at: float = field(default_factory=now_ts)
    detail: dict[str, Any] = field(default_factory=dict)
    id: str = field(default_factory=new_id)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict."""
        return {
            "id": self.id,
            "namespace": self.namespace,
            "memory_id": self.memory_id,
            "op": self.op,
            "at": self.at,
            "detail": dict(self.detail),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditEntry:
        """Inverse of :meth:`to_dict`."""
        return cls(
            namespace=data["namespace"],
            memory_id=data["memory_id"],
            op=data["op"],
            at=float(data["at"]),
            detail=dict(data.get("detail") or {}),
            id=data.get("id") or new_id(),
        )


# Graph node ids that are not memories: entities that ``mentions`` edges point
# at, and the audit key of a thread's turns kept out of long-term memory.
ENTITY_PREFIX = "entity:"
OBSERVE_PREFIX = "observe:"


# Bytes of UTF-8 an id may take: the strictest backend (a Milvus server)
# keeps record ids and edge ends in VARCHAR(64) fields, which count bytes.
ID_BYTES = 64


def entity_id(name: str) -> str:
    """The graph node id of an entity (edges ``mentions`` point at it).

    At most :data:`ID_BYTES` bytes: a longer name (a pasted key, a long URL
    segment, a German compound) keeps its head and gets a hash of the whole,
    so every writer and reader reaches the same node and the store holds it.
    """
    node = ENTITY_PREFIX + " ".join(name.lower().split())
    data = node.encode("utf-8", "surrogatepass")
    if len(data) <= ID_BYTES:
        return node
    digest = hashlib.sha256(data).hexdigest()[:16]
    return data[: ID_BYTES - 17].decode("utf-8", "ignore") + "~" + digest


def observe_id(thread_id: str) -> str:
    """The audit ``memory_id`` of a thread's turns kept out of long-term memory.

    A hash, so any thread id fits the store's 64-character field, and
    ``forget(thread_id=...)`` finds the thread's entries by it.
    """
    return (
        OBSERVE_PREFIX
        + hashlib.sha256(thread_id.encode("utf-8", "replace")).hexdigest()[:40]
    )


# Where HindsightStore keeps an item's key, value and order in ``record.meta``.
STORE_META = "store"


def store_item_id(namespace: str, key: str) -> str:
    """The memory id of the store item ``key`` in ``namespace``.

    Derived, so the store finds an item by its key in one lookup; import
    derives it again for the target namespace, so a copied item keeps its key.
    """
    return uuid.uuid5(uuid.NAMESPACE_URL, f"hindsight-store\0{namespace}\0{key}").hex
