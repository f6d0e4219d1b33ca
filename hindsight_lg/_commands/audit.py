"""``audit``: where one memory came from and everything that happened to it since.

Answers, without any tracing tool: which thread and messages it was captured
from and when, what merged into it, what it superseded and what superseded
it, what it was consolidated from or into, and when it was last recalled and
used. Recall itself writes nothing (it is on the turn's path); a recall that
helped is recorded when the memory is reinforced, which is what
"last recalled" reports.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from hindsight_lg._commands import add_store_args, open_memory, require_namespace
from hindsight_lg.model import AuditEntry, EdgeType, MemoryRecord, to_datetime

_ORIGIN_OPS = ("create", "supersede", "remember", "consolidate")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``audit`` command."""
    p = sub.add_parser(
        "audit", help="where a memory came from, what merged into or superseded it"
    )
    add_store_args(p)
    p.add_argument("memory_id", help="memory id (or a unique prefix, as listed)")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_audit)


def cmd_audit(args: argparse.Namespace) -> int:
    """Print the audit report of one memory."""
    with open_memory(args, embeds=False, known_namespace=False) as memory:
        try:
            report = audit_report(memory, args.namespace, args.memory_id)
        except LookupError as exc:
            require_namespace(memory, args.namespace)  # the likelier mistake first
            print(f"error: {exc.args[0]}", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(render(report))
    return 0


def resolve(memory: Any, namespace: str, memory_id: str) -> MemoryRecord:
    """The memory with this id, or with this unique id prefix (any status).

    The engine's own rule (:mod:`hindsight_lg.memory.lifecycle.ids`), so a
    command reads a listed id as ``correct``, ``restore`` and ``forget`` do.

    Raises:
        LookupError: no memory, or a prefix that matches several.
    """
    full: str = memory.lifecycle.resolve_id(namespace, memory_id)
    record: MemoryRecord | None = memory.get(namespace, full)
    if record is None:  # forgotten between the two reads
        raise LookupError(f"no memory {memory_id!r} in namespace {namespace!r}")
    return record


def audit_report(memory: Any, namespace: str, memory_id: str) -> dict[str, Any]:
    """Everything known about one memory's history, as a JSON-ready dict.

    Args:
        memory: a :class:`~hindsight_lg.HindsightMemory`.
        namespace: the tenant.
        memory_id: the id or a unique prefix of it.

    Raises:
        LookupError: unknown or ambiguous id.
    """
    record = resolve(memory, namespace, memory_id)
    trail: list[AuditEntry] = memory.audit(namespace, record.id)
    edges = memory.edges(namespace, record.id)
    return {
        "memory": _summary(record),
        "origin": _origin(record, trail),
        "merged": [_entry(e) for e in trail if e.op == "merge"],
        "supersedes": _supersedes(record.id, trail, edges),
        "superseded_by": _superseded_by(memory, namespace, record),
        "derived_from": sorted(
            e.dst
            for e in edges
            if e.type is EdgeType.DERIVED_FROM and e.src == record.id
        ),
        "consolidated_into": sorted(
            e.src
            for e in edges
            if e.type is EdgeType.DERIVED_FROM and e.dst == record.id
        ),
        "last_recalled": _last_recalled(record, trail),
        "history": [_entry(e) for e in trail],
    }


def _summary(r: MemoryRecord) -> dict[str, Any]:
    return {
        "id": r.id,
        "kind": r.kind.value,
        "tier": r.tier.value,
        "status": r.status.value,
        "content": r.content,
        "importance": r.importance,
        "confidence": r.confidence,
        "version": r.version,
    }


def _origin(r: MemoryRecord, trail: list[AuditEntry]) -> dict[str, Any]:
    first = next((e for e in trail if e.op in _ORIGIN_OPS), None)
    return {
        "thread_id": r.thread_id or None,
        "source_ids": list(r.source_ids),
        "source_kind": r.source_kind.value,
        "agent_id": r.agent_id or None,
        "event_time": _iso(r.event_time),
        "created_at": _iso(r.created_at),
        "how": first.op if first else None,
        "first_content": first.detail.get("content") if first else None,
    }


def _supersedes(memory_id: str, trail: list[AuditEntry], edges: list[Any]) -> list[str]:
    ids = {
        str(e.detail["supersedes"])
        for e in trail
        if e.op == "supersede" and e.detail.get("supersedes")
    }
    ids |= {
        e.dst for e in edges if e.type is EdgeType.SUPERSEDES and e.src == memory_id
    }
    return sorted(ids)


def _superseded_by(memory: Any, namespace: str, r: MemoryRecord) -> Any:
    if not r.superseded_by:
        return None
    newer: MemoryRecord | None = memory.get(namespace, r.superseded_by)
    if newer is None:  # deleted since: the id is all that is left
        return {"id": r.superseded_by, "content": None, "at": None}
    return {"id": newer.id, "content": newer.content, "at": _iso(newer.created_at)}


def _last_recalled(r: MemoryRecord, trail: list[AuditEntry]) -> dict[str, Any]:
    uses = [e.at for e in trail if e.op == "reinforce"]
    last = max([*uses, r.last_accessed_at]) if (uses or r.access_count) else 0.0
    return {"at": _iso(last) if last else None, "uses": max(r.access_count, len(uses))}


def _entry(e: AuditEntry) -> dict[str, Any]:
    return {"at": _iso(e.at), "op": e.op, **e.detail}


def _iso(ts: float) -> str | None:
    return to_datetime(ts).strftime("%Y-%m-%d %H:%M:%S UTC") if ts else None


def render(report: dict[str, Any]) -> str:
    """The report as indented text."""
    m, o = report["memory"], report["origin"]
    lines = [
        f"{m['id']}  {m['kind']} · {m['tier']} · {m['status']} · v{m['version']}",
        f"  {m['content']}",
        f"from     thread {o['thread_id'] or '-'}, messages "
        f"{', '.join(o['source_ids']) or '-'} ({o['source_kind']})",
        f"         said {o['event_time']}, stored {o['created_at']} by {o['how'] or '?'}",
    ]
    for e in report["merged"]:
        ids = ", ".join(e.get("source_ids") or []) or "-"
        lines.append(f"merged   {e['at']}: {e.get('content', '')!r} (messages {ids})")
    for other in report["supersedes"]:
        lines.append(f"replaced {other}")
    if report["superseded_by"]:
        s = report["superseded_by"]
        lines.append(f"replaced by {s['id']} at {s['at'] or '?'}: {s['content']!r}")
    for other in report["derived_from"]:
        lines.append(f"from episode {other}")
    for other in report["consolidated_into"]:
        lines.append(f"consolidated into {other}")
    last = report["last_recalled"]
    # Recall is a read and records nothing; what the store keeps is each time
    # a recalled memory was used (reinforced), so that is what this line says.
    lines.append(
        f"used     {last['at'] or 'never'} ({last['uses']} times reinforced; "
        "recalls are not recorded)"
    )
    lines.append("history")
    lines += [f"  {e['at']}  {e['op']}" for e in report["history"]]
    return "\n".join(lines)
