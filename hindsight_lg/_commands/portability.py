"""``export``, ``import`` and ``forget``: move a tenant's memory, or erase it."""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from typing import Any, TextIO

from hindsight_lg._commands import (
    NOT_FOUND,
    CommandError,
    add_store_args,
    open_memory,
)
from hindsight_lg._files import private_output


def _passphrase_args(p: argparse.ArgumentParser) -> None:
    # Never on the command line: it would show in `ps` and shell history.
    p.add_argument(
        "--passphrase-env", metavar="VAR", help="read the passphrase from $VAR"
    )
    p.add_argument("--encrypt", action="store_true", help="prompt for a passphrase")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    p.add_argument(
        "--yes", "-y", action="store_true", help="confirm without asking (scripts)"
    )
    p.set_defaults(func=cmd_forget)


def _passphrase(args: argparse.Namespace) -> str | None:
    if args.passphrase_env:
        value = os.environ.get(args.passphrase_env)
        if not value:
            raise CommandError(f"${args.passphrase_env} is empty or unset")
        return value
    if not args.encrypt:
        return None
    try:
        return getpass.getpass("passphrase: ")
    except EOFError:
        raise CommandError("no passphrase given (use --passphrase-env VAR)") from None


def cmd_export(args: argparse.Namespace) -> int:
    """Export one namespace."""
    from hindsight_lg.memory import export_namespace

    secret = _passphrase(args)
    # The output is opened before the store, so a bad path fails at once.
    with _output(args.out) as out, open_memory(args, embeds=False) as memory:
        stats = export_namespace(
            memory,
            args.namespace,
            out,
            vectors=args.vectors,
            agent_id=args.agent,
            passphrase=secret,
        )
    print(json.dumps({"exported": stats.as_dict()}), file=sys.stderr)
    return 0


def _output(path: str) -> AbstractContextManager[TextIO]:
    """Where an export goes: stdout for ``-``, else a file written whole, 0600.

    An export holds a tenant's memories: the file is its owner's alone, and a
    failed export leaves no partial file (what was at the path stays). A
    device or pipe (``/dev/stdout``, a FIFO) is written as it is.
    """
    if path == "-":
        return nullcontext(sys.stdout)
    if os.path.exists(path) and not os.path.isfile(path):
        return open(path, "w", encoding="utf-8")
    return private_output(path)


def cmd_import(args: argparse.Namespace) -> int:
    """Import an export file, checked whole before the store is even opened.

    The docs promise a failed import writes nothing; opening the store first
    would create it (with its spool and lock files) for a file that is not
    an export at all, and load the embedding model before saying so.
    """
    from hindsight_lg.memory import import_namespace

    secret = _passphrase(args)
    with ExitStack() as opened:

        def store() -> Any:
            return opened.enter_context(open_memory(args, create=True))

        try:
            with open(args.file, encoding="utf-8") as fh:
                stats = import_namespace(
                    store, fh, namespace=args.namespace, passphrase=secret
                )
        except (OSError, UnicodeError, ValueError, TypeError, RecursionError) as exc:
            detail = "nested too deeply" if isinstance(exc, RecursionError) else exc
            raise CommandError(f"{args.file}: {detail}") from None
    print(json.dumps({"imported": stats.as_dict()}))
    return 0


def cmd_forget(args: argparse.Namespace) -> int:
    """Delete a namespace's records, edges, audit and spooled captures."""
    from hindsight_lg.memory import forget_namespace

    # A namespace with only spooled captures left is still worth forgetting.
    with open_memory(args, known_namespace=not args.spool, embeds=False) as memory:
        # Opened (locked) before anything is erased: a spool a live process
        # holds is refused here, with the store untouched.
        spool = _other_spool(args.spool, memory)
        try:
            if not _confirmed(args):
                print("nothing erased", file=sys.stderr)
                return NOT_FOUND
            report = forget_namespace(
                memory, args.namespace, spool=spool, verify=args.verify
            )
        finally:
            if spool is not None:
                spool.close()
    print(json.dumps({"removed": report.removed, "left": report.left}))
    return 0 if report.clean else NOT_FOUND


def _other_spool(path: str | None, memory: Any) -> Any:
    """A spool to purge besides the memory's own, opened; ``None`` for the own one.

    Raises:
        StoreLocked: a live process owns the spool (it would write the
            tenant's captures back): forget through it, or stop it first.
    """
    from hindsight_lg.memory import Spool

    own = getattr(memory, "spool", None)
    if not path or (own is not None and own.path.resolve() == Path(path).resolve()):
        return None
    return Spool(path).open()


def _confirmed(args: argparse.Namespace) -> bool:
    """``--yes``, or "y" typed at a terminal; never a guess from a pipe."""
    if args.yes:
        return True
    if not sys.stdin or not sys.stdin.isatty():
        raise CommandError(
            f"erasing {args.namespace!r} needs confirmation: pass --yes "
            "(standard input is not a terminal)",
            NOT_FOUND,
        )
    try:
        answer = input(f"erase everything of {args.namespace!r}? [y/N] ")
    except EOFError:
        answer = ""
    return answer.strip().lower() in ("y", "yes")
