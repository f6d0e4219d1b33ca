"""``export``, ``import`` and ``forget``: move a tenant's memory, or erase it."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys

from hindsight_lg._commands import add_store_args, open_memory


def _passphrase_args(p: argparse.ArgumentParser) -> None:
    # Never on the command line: it would show in `ps` and shell history.
    p.add_argument(
        "--passphrase-env", metavar="VAR", help="read the passphrase from $VAR"
    )
    p.add_argument("--encrypt", action="store_true", help="prompt for a passphrase")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the export, import and forget commands."""
    p = sub.add_parser("export", help="write a namespace as JSON Lines")
    add_store_args(p)
    p.add_argument("--out", "-o", default="-", help="file to write (default stdout)")
    p.add_argument("--vectors", action="store_true", help="include dense vectors")
    p.add_argument("--agent", default=None, help="only what this agent may see")
    _passphrase_args(p)
    p.set_defaults(func=cmd_export)

    p = sub.add_parser("import", help="restore an export")
    add_store_args(p, namespace=False)
    p.add_argument("file", help="the export file")
    # Required: a tenant named inside a file someone handed over must never
    # decide whose memory it lands in.
    p.add_argument(
        "--namespace",
        "-n",
        required=True,
        help="the tenant to import into (required: the file never picks it)",
    )
    _passphrase_args(p)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser("forget", help="erase a namespace (right to be forgotten)")
    add_store_args(p)
    p.add_argument("--spool", default=None, help="the capture spool file, if used")
    p.add_argument("--verify", action="store_true", help="count what is left")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    p.set_defaults(func=cmd_forget)


def _passphrase(args: argparse.Namespace) -> str | None:
    if args.passphrase_env:
        value = os.environ.get(args.passphrase_env)
        if not value:
            raise SystemExit(f"error: ${args.passphrase_env} is empty or unset")
        return value
    return getpass.getpass("passphrase: ") if args.encrypt else None


def cmd_export(args: argparse.Namespace) -> int:
    """Export one namespace."""
    from hindsight_lg.memory.transfer.portability import export_namespace

    secret = _passphrase(args)
    with open_memory(args) as memory:
        if args.out == "-":
            stats = export_namespace(
                memory,
                args.namespace,
                sys.stdout,
                vectors=args.vectors,
                agent_id=args.agent,
                passphrase=secret,
            )
        else:
            with open(args.out, "w", encoding="utf-8") as fh:
                stats = export_namespace(
                    memory,
                    args.namespace,
                    fh,
                    vectors=args.vectors,
                    agent_id=args.agent,
                    passphrase=secret,
                )
    print(json.dumps({"exported": stats.as_dict()}), file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    """Import an export file (validated whole before anything is written)."""
    from hindsight_lg.memory.transfer.portability import import_namespace

    secret = _passphrase(args)
    try:
        with open(args.file, encoding="utf-8") as fh, open_memory(args) as memory:
            stats = import_namespace(
                memory, fh, namespace=args.namespace, passphrase=secret
            )
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        print(f"error: {args.file}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps({"imported": stats.as_dict()}))
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Delete a namespace's records, edges, audit and spooled captures."""
    from hindsight_lg.memory.capture.spool import Spool
    from hindsight_lg.memory.lifecycle.erasure import forget_namespace

    if not args.yes and input(f"erase everything of {args.namespace!r}? [y/N] ") != "y":
        return 1
    spool = Spool(args.spool) if args.spool else None
    with open_memory(args) as memory:
        report = forget_namespace(
            memory, args.namespace, spool=spool, verify=args.verify
        )
    if spool is not None:
        spool.close()
    print(json.dumps({"removed": report.removed, "left": report.left}))
    return 0 if report.clean else 3
