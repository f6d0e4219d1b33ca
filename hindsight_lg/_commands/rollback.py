"""``rollback``: undo what one memory, one thread or a span of time wrote."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from hindsight_lg._commands import (
    FAILED,
    NOT_FOUND,
    CommandError,
    add_store_args,
    open_memory,
)

if TYPE_CHECKING:
    from hindsight_lg.memory import Rollback


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``rollback``."""
    p = sub.add_parser(
        "rollback",
        help="undo what one memory, thread or time span wrote (one audited step)",
        description="What the selection superseded is current again; what it "
        "wrote is archived (restorable). Name one of --memory, --thread, or "
        "--since/--until.",
    )
    add_store_args(p)
    p.add_argument("--memory", help="memory id (or a unique prefix, as listed)")
    p.add_argument("--thread", help="every memory this thread wrote")
    p.add_argument(
        "--since", type=when, help="written at or after (ISO date or time, UTC)"
    )
    p.add_argument("--until", type=when, help="written before (ISO date or time, UTC)")
    p.add_argument(
        "--dry-run", action="store_true", help="say what would change, change nothing"
    )
    p.set_defaults(func=cmd_rollback)


def when(text: str) -> float:
    """An argparse type: an ISO date or date-time (UTC unless it says) as POSIX seconds.

    Example:
        >>> when("2026-01-01")
        1767225600.0
    """
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date or time (e.g. 2026-03-01 or 2026-03-01T09:30)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def cmd_rollback(args: argparse.Namespace) -> int:
    """Roll back and print what was archived and what is current again."""
    from hindsight_lg._commands.audit import resolve

    span = args.since is not None or args.until is not None
    if [args.memory is not None, args.thread is not None, span].count(True) != 1:
        raise CommandError(
            "name one thing to roll back: --memory ID, --thread ID, or --since/--until",
            FAILED,
        )
    if None not in (args.since, args.until) and args.since >= args.until:
        raise CommandError("--since must be before --until", FAILED)
    with open_memory(args, embeds=False) as memory:
        memory_id = None
        if args.memory is not None:
            try:
                memory_id = resolve(memory, args.namespace, args.memory).id
            except LookupError as exc:
                raise CommandError(exc.args[0], NOT_FOUND) from None
        try:
            done = memory.rollback(
                args.namespace,
                memory_id=memory_id,
                thread_id=args.thread,
                since=args.since,
                until=args.until,
                dry_run=args.dry_run,
            )
        except ValueError as exc:
            raise CommandError(str(exc), FAILED) from None
    print(_report(done))
    return 0


def _report(done: Rollback) -> str:
    """What changed, one id per line, as ``list`` prints them."""
    if not done:
        return (
            "nothing to roll back: the selection holds no memory that is not "
            "archived already"
        )
    would = "would be " if done.dry_run else ""
    lines = [
        f"{len(done.archived)} {would}archived, "
        f"{len(done.restored)} {would}current again"
    ]
    lines += [f"  archived {i[:8]}" for i in done.archived]
    lines += [f"  current  {i[:8]}" for i in done.restored]
    if done.dry_run:
        lines.append("(dry run: nothing changed)")
    return "\n".join(lines)
