"""``explain``, ``decay``, ``restore`` and ``consolidate``: why recall chose, and upkeep."""

from __future__ import annotations

import argparse
import sys

from hindsight_lg._commands import (
    NOT_FOUND,
    CommandError,
    add_store_args,
    namespace_arg,
    open_memory,
    positive_int,
)
from hindsight_lg.memory import ClusterParams, RecallResult


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the lifecycle commands."""
    p = sub.add_parser("explain", help="recall with per-path scores, as a tree")
    add_store_args(p)
    p.add_argument("query")
    p.add_argument("--budget", type=positive_int, default=1000, help="token budget")
    p.add_argument("--agent", default=None)
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser(
        "decay", help="move weak memories to cold, weak cold ones to archived"
    )
    add_store_args(p, namespace=False)
    p.add_argument(
        "--namespace",
        "-n",
        default=None,
        type=namespace_arg,
        help="one namespace (default: all)",
    )
    p.set_defaults(func=cmd_decay)

    p = sub.add_parser("restore", help="bring a cold or archived memory back")
    add_store_args(p)
    p.add_argument("memory_id", help="memory id (or a unique prefix, as listed)")
    p.set_defaults(func=cmd_restore)

    p = sub.add_parser("consolidate", help="cluster episodes into semantic memories")
    add_store_args(p)
    p.set_defaults(func=cmd_consolidate)


def explain_tree(result: RecallResult) -> str:
    """Render a recall explanation: chosen memories with paths, then the cut ones."""
    lines = [
        f"recall {result.query!r}: {len(result)} memories, "
        f"{result.used_tokens}/{result.budget_tokens} tokens"
    ]
    detail = result.explanation or {}
    for i, m in enumerate(result.memories):
        last = i == len(result.memories) - 1 and not result.cut
        lines.append(
            f"{'└' if last else '├'}── {m.score:.3f} {m.record.kind.value} "
            f"{m.id[:8]} {m.record.content[:70]}"
        )
        parts = detail.get(m.id, m.paths)
        bar = " " if last else "│"
        for key in sorted(parts):
            lines.append(f"{bar}     {key:<14} {parts[key]:.3f}")
    if result.cut:
        lines.append("└── cut")
        for mid, reason in list(result.cut.items())[:20]:
            score = detail.get(mid, {}).get("score", 0.0)
            lines.append(f"      {mid[:8]} {score:.3f} {reason}")
    return "\n".join(lines)


def cmd_explain(args: argparse.Namespace) -> int:
    """Print the explanation tree."""
    with open_memory(args) as memory:
        result = memory.recall(
            args.query,
            namespace=args.namespace,
            budget_tokens=args.budget,
            agent_id=args.agent,
            explain=True,
            timeout=None,
        )
    print(explain_tree(result))
    return 0


def cmd_decay(args: argparse.Namespace) -> int:
    """Run decay and print the counts."""
    with open_memory(args, embeds=False) as memory:
        moved = memory.decay(args.namespace)
    print(
        f"checked {moved['checked']}: {moved['cold']} went cold, "
        f"{moved['archived']} archived"
    )
    return 0


def cmd_restore(args: argparse.Namespace) -> int:
    """Restore one memory."""
    from hindsight_lg._commands.audit import resolve

    with open_memory(args, embeds=False) as memory:
        try:
            found = resolve(memory, args.namespace, args.memory_id)
        except LookupError as exc:
            raise CommandError(exc.args[0], NOT_FOUND) from None
        record = memory.restore(args.namespace, found.id)
    print(f"{record.id} is {record.status.value}")
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    """Consolidate with a progress line on stderr; say why when nothing clusters."""
    shown = False

    def progress(done: int, total: int) -> None:
        nonlocal shown
        shown = True
        print(f"\rconsolidating {done}/{total} clusters", end="", file=sys.stderr)

    with open_memory(args) as memory:
        written = memory.consolidate(args.namespace, progress=progress)
    if shown:
        print(file=sys.stderr)
    for r in written:
        print(
            f"{r.id[:8]} <- {len(r.meta.get('derived_from', []))} episodes: "
            f"{r.content[:100]}"
        )
    print(f"({len(written)} semantic memories)")
    if not written:
        p = ClusterParams()
        print(
            f"nothing to consolidate: no group of {p.min_size} or more active "
            f"episodes with similarity >= {p.similarity} that share an entity or "
            f"fall within {p.window_days:g} days",
            file=sys.stderr,
        )
    return 0
