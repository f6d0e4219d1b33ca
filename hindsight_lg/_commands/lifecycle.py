"""``explain``, ``decay``, ``restore`` and ``consolidate``: why recall chose, and upkeep."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from typing import Any

from hindsight_lg._commands import (
    NOT_FOUND,
    CommandError,
    add_store_args,
    namespace_arg,
    open_memory,
    positive_int,
)
from hindsight_lg.memory import ClusterParams, RecallResult


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="count what would go cold or be archived, change nothing",
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
    # How the question was read, when it changes what the lines show.
    asked = "" if result.asked == "fact" else f" (asked: {result.asked})"
    lines = [
        f"recall {result.query!r}{asked}: {len(result)} memories, "
        f"{result.used_tokens}/{result.budget_tokens} tokens"
    ]
    detail = result.explanation or {}
    for i, m in enumerate(result.memories):
        last = i == len(result.memories) - 1 and not result.cut
        lines.append(
            f"{'└' if last else '├'}── {m.score:.3f} {m.record.kind.value} "
            f"{m.id[:8]} {m.record.content[:70]}"
        )
        bar = " " if last else "│"
        for text in m.describe():
            lines.append(f"{bar}     {text}")
        if m.id in result.wake:
            lines.append(f"{bar}     cold, {result.wake[m.id]}")
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
    """Run decay (or count it) and print the counts.

    Decay is computed against now. On a store whose newest memory is older
    than :data:`STALE_DAYS`, the whole gap counts as disuse: the command says
    so on stderr, with the numbers of a dry run, before it changes anything.
    """
    with open_memory(args, embeds=False) as memory:
        stale = _stale_namespaces(memory, args.namespace)
        moved = memory.decay(args.namespace, dry_run=bool(stale) or args.dry_run)
        if stale:
            print(
                _stale_warning(stale, moved, memory.clock(), args.dry_run),
                file=sys.stderr,
            )
            if not args.dry_run:
                moved = memory.decay(args.namespace)
    done = (
        ("would go cold", "would be archived")
        if args.dry_run
        else (
            "went cold",
            "archived",
        )
    )
    print(
        f"checked {moved['checked']}: {moved['cold']} {done[0]}, "
        f"{moved['archived']} {done[1]}, {moved['kept']} weak but kept cold "
        "(they matter)" + (" (dry run: nothing changed)" if args.dry_run else "")
    )
    return 0


#: A namespace whose newest memory is older than this many days is "stale".
STALE_DAYS = 30.0


def _stale_namespaces(memory: Any, namespace: str | None) -> dict[str, float]:
    """Namespaces whose newest memory is older than :data:`STALE_DAYS`: its age."""
    now = memory.clock()
    ages: dict[str, float] = {}
    for ns in [namespace] if namespace else memory.namespaces():
        newest = memory.list_memories(ns, history=True, limit=1)
        if not newest:
            continue
        last = max(newest[0].event_time, newest[0].created_at)
        age = (now - last) / 86400.0
        if age > STALE_DAYS:
            ages[ns] = age
    return ages


def _stale_warning(
    stale: dict[str, float], preview: dict[str, int], now: float, dry_run: bool
) -> str:
    """What decay will do (or, in a dry run, would do) to a store nobody has
    written to for months."""
    names = ", ".join(f"{ns} ({age:.0f} days)" for ns, age in sorted(stale.items())[:5])
    more = f" and {len(stale) - 5} more" if len(stale) > 5 else ""
    today = datetime.fromtimestamp(now, UTC).date().isoformat()
    would = "would " if dry_run else ""
    advice = (
        ""
        if dry_run
        else " Run with --dry-run to see the numbers without changing anything."
    )
    return (
        f"warning: the newest memory of {names}{more} is months old. Decay is "
        f"computed against now ({today}), so the whole gap counts as disuse: "
        f"{preview['cold']} of {preview['checked']} memories {would}go cold, "
        f"{preview['archived']} {would or 'are '}archived, {preview['kept']} weak "
        f"ones {would or ''}stay cold because they matter. Cold memories are still "
        "recalled for a question that bears on them directly; `hindsight-lg "
        f"restore ID` brings one back.{advice}"
    )


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
