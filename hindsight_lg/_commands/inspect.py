"""``recall``, ``list`` and ``stats``: look at what memory holds."""

from __future__ import annotations

import argparse
import json
import sys

from hindsight_lg._commands import (
    add_store_args,
    open_memory,
    positive_int,
    require_namespace,
)
from hindsight_lg.backends import Where
from hindsight_lg.model import to_datetime

HISTORY = ("active", "cold", "superseded", "archived")  # every memory, not deleted


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the inspection commands."""
    p = sub.add_parser("recall", help="recall memories for a query")
    add_store_args(p)
    p.add_argument("query")
    p.add_argument("--budget", type=positive_int, default=1000, help="token budget")
    p.add_argument(
        "-k", type=positive_int, default=None, help="at most k memories (>= 1)"
    )
    p.add_argument("--agent", default=None, help="reading agent id")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("list", help="list memories of a namespace")
    add_store_args(p)
    p.add_argument("--history", action="store_true", help="include superseded/cold")
    p.add_argument("--kind", action="append", default=[], help="filter by kind")
    p.add_argument("--limit", type=positive_int, default=50, help="rows (>= 1)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("stats", help="counts by status, kind and tier")
    add_store_args(p)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser("namespaces", help="list the namespaces holding memories")
    add_store_args(p, namespace=False)
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_namespaces)


def cmd_recall(args: argparse.Namespace) -> int:
    """Print recalled memories with their scores."""
    with open_memory(args) as memory:
        result = memory.recall(
            args.query,
            namespace=args.namespace,
            budget_tokens=args.budget,
            k=args.k,
            agent_id=args.agent,
            timeout=None,
        )
    if result.cut_chars:
        print(
            f"note: the query's middle was not read ({result.cut_chars} characters"
            " past Policy.max_query_chars)",
            file=sys.stderr,
        )
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": m.id,
                        "score": m.score,
                        "paths": m.paths,
                        "content": m.record.content,
                    }
                    for m in result.memories
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    for m in result.memories:
        print(f"{m.score:6.3f}  {m.line}")
    print(
        f"({len(result)} memories, {result.used_tokens}/{result.budget_tokens} tokens)"
    )
    if not result.memories:
        print(_why_nothing(args), file=sys.stderr)
    return 0


def _why_nothing(args: argparse.Namespace) -> str:
    """Why a recall returned no memory: an empty query, or nothing bears on it."""
    if not args.query.strip():
        return "nothing recalled: the query is empty"
    return (
        f"nothing recalled: no memory of {args.namespace!r} bears on this query"
        " (recall's relevance rule); `hindsight-lg explain QUERY -n NAMESPACE`"
        " shows every candidate's scores"
    )


def cmd_list(args: argparse.Namespace) -> int:
    """Print memories, newest first."""
    # The namespace is checked only when nothing shows: a check up front costs
    # a scan of the namespace on Milvus Lite (half a second at 10,000).
    with open_memory(args, embeds=False, known_namespace=False) as memory:
        rows = memory.list_memories(
            args.namespace, history=args.history, kinds=args.kind, limit=args.limit
        )
        if not rows:
            require_namespace(memory, args.namespace)
    if args.json:
        print(
            json.dumps(
                [r.to_dict(vectors=False) for r in rows], ensure_ascii=False, indent=2
            )
        )
        return 0
    for r in rows:
        when = to_datetime(r.event_time).strftime("%Y-%m-%d %H:%M")
        print(
            f"{r.id[:8]}  {when}  {r.kind.value:<10} {r.status.value:<10} "
            f"imp {r.importance:.2f}  {r.content[:90]}"
        )
    print(f"({len(rows)} memories)")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    """Print counts as JSON."""
    with open_memory(args, embeds=False, known_namespace=False) as memory:
        stats = memory.stats(args.namespace)
        if not stats["total"]:
            require_namespace(memory, args.namespace)
    print(json.dumps(stats, ensure_ascii=False, indent=2))
    return 0


def cmd_namespaces(args: argparse.Namespace) -> int:
    """Print each namespace with how many memories it holds (any status)."""
    with open_memory(args, embeds=False) as memory:
        where = Where(statuses=HISTORY)
        counts = {ns: memory.count(ns, where) for ns in memory.namespaces()}
    if args.json:
        print(json.dumps(counts, ensure_ascii=False, indent=2))
        return 0
    for ns, n in counts.items():
        print(f"{n:8d}  {ns}")
    print(f"({len(counts)} namespaces)")
    return 0
