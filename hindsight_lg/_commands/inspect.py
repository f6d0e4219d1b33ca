"""``recall``, ``list`` and ``stats``: look at what memory holds."""

from __future__ import annotations

import argparse
import json

from hindsight_lg._commands import add_store_args, open_memory
from hindsight_lg.model import to_datetime


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the inspection commands."""
    p = sub.add_parser("recall", help="recall memories for a query")
    add_store_args(p)
    p.add_argument("query")
    p.add_argument("--budget", type=int, default=1000, help="token budget")
    p.add_argument("-k", type=int, default=None, help="at most k memories")
    p.add_argument("--agent", default=None, help="reading agent id")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_recall)

    p = sub.add_parser("list", help="list memories of a namespace")
    add_store_args(p)
    p.add_argument("--history", action="store_true", help="include superseded/cold")
    p.add_argument("--kind", action="append", default=[], help="filter by kind")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    p = sub.add_parser("stats", help="counts by status, kind and tier")
    add_store_args(p)
    p.set_defaults(func=cmd_stats)


def cmd_recall(args: argparse.Namespace) -> int:
    """Print recalled memories with their scores."""
    if args.budget <= 0:
        raise SystemExit("error: --budget must be positive")
    with open_memory(args) as memory:
        result = memory.recall(
            args.query,
            namespace=args.namespace,
            budget_tokens=args.budget,
            k=args.k,
            agent_id=args.agent,
            timeout=None,
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
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    """Print memories, newest first."""
    with open_memory(args) as memory:
        rows = memory.list_memories(
            args.namespace, history=args.history, kinds=args.kind, limit=args.limit
        )
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
    with open_memory(args) as memory:
        print(json.dumps(memory.stats(args.namespace), ensure_ascii=False, indent=2))
    return 0
