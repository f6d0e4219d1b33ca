"""``reembed``: move a store to another embedding model."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from hindsight_lg._commands import CommandError, check_uri


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the reembed command."""
    p = sub.add_parser(
        "reembed", help="re-embed every memory with another model and switch to it"
    )
    p.add_argument(
        "--uri",
        default="./hindsight.db",
        help="Milvus Lite file or http(s):// server (default ./hindsight.db)",
    )
    p.add_argument(
        "--prefix",
        default="hindsight",
        type=_prefix,
        help="collection prefix: letters, digits, underscores (default hindsight)",
    )
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument(
        "--to",
        metavar="MODEL",
        help="hashing, hashing-DIM, minilm, e5, minilm+e5, bge-m3 or a model directory",
    )
    which.add_argument(
        "--migrate",
        action="store_true",
        help="copy into collections of the current schema (on a server: "
        "partitioned by namespace where it supports that), vectors kept",
    )
    p.set_defaults(func=cmd_reembed)


def _prefix(text: str) -> str:
    if not text or not text.replace("_", "").isalnum() or not text.isascii():
        raise argparse.ArgumentTypeError(
            f"prefix {text!r} must be ASCII letters, digits and underscores"
        )
    return text


def cmd_reembed(args: argparse.Namespace) -> int:
    """Re-embed the store at ``--uri`` with ``--to`` and switch to it."""
    from hindsight_lg.embeddings import embedder_from_name
    from hindsight_lg.memory import reembed

    if args.uri == ":memory:":
        raise CommandError("reembed needs a Milvus store (a file or a server)")
    check_uri(args.uri, create=False)

    def progress(done: int, total: int) -> None:
        print(f"\rcopied {done}/{total} namespaces", end="", file=sys.stderr)

    if args.migrate:
        return _migrate(args, progress)
    embedder = embedder_from_name(args.to)
    report = reembed(args.uri, to=embedder, prefix=args.prefix, progress=progress)
    print(file=sys.stderr)
    print(
        f"{report.records} records, {report.edges} edges, {report.audit} audit "
        f"entries re-embedded into {report.new_prefix} with {args.to}; "
        f"{report.old_prefix} is kept (drop it once satisfied)"
    )
    return 0


def _migrate(args: argparse.Namespace, progress: Callable[[int, int], None]) -> int:
    from hindsight_lg.backends import migrate_generation

    report = migrate_generation(args.uri, prefix=args.prefix, progress=progress)
    print(file=sys.stderr)
    print(
        f"{report.records} records, {report.edges} edges, {report.audit} audit "
        f"entries copied into {report.new_prefix} (vectors kept); "
        f"{report.old_prefix} is kept (drop it once satisfied)"
    )
    return 0
