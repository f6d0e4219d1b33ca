"""Sub-commands of the ``hindsight-lg`` CLI, one module each.

Exit codes, for every command: 0 done; 1 nothing to act on (an unknown
namespace or memory id, a confirmation declined, data left after ``forget``);
2 a usage, input or store error; 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

NOT_FOUND, FAILED = 1, 2  # exit codes (0 is success)


class CommandError(Exception):
    """A failure the CLI reports as ``error: <message>`` with an exit code."""

    def __init__(self, message: str, code: int = FAILED) -> None:
        super().__init__(message)
        self.code = code


def namespace_arg(text: str) -> str:
    """An argparse type: a namespace the store accepts, refused before it opens."""
    from hindsight_lg._text import is_hidden
    from hindsight_lg.backends import check_namespace

    if all(c.isspace() or is_hidden(c) for c in text):
        raise argparse.ArgumentTypeError(
            f"namespace {text!r} is empty or invisible: give a user or tenant id"
        )
    try:
        return check_namespace(text)
    except ValueError as exc:  # a look-alike, or too long
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    """An argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def add_store_args(p: argparse.ArgumentParser, *, namespace: bool = True) -> None:
    """The options every command that opens memory shares."""
    p.add_argument(
        "--uri",
        default="./hindsight.db",
        help="Milvus Lite file or http(s):// server (default ./hindsight.db)",
    )
    p.add_argument(
        "--embedder",
        default=None,
        help="hashing, hashing-DIM, minilm, e5, minilm+e5, bge-m3 or a model directory "
        "(default: the model the store records; for a new store, the best "
        "available)",
    )
    if namespace:
        p.add_argument(
            "--namespace",
            "-n",
            required=True,
            type=namespace_arg,
            help="tenant / user id",
        )


def is_lite(uri: str) -> bool:
    """True for a Milvus Lite file path (not ``:memory:``, not a server URL)."""
    return uri != ":memory:" and "://" not in uri


def read_only(path: Path) -> bool:
    """True when ``path`` (or its nearest existing parent) is on a read-only mount."""
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): let the open say
        return False


def check_uri(uri: str, *, create: bool) -> None:
    """Refuse a Lite path that names no store (unless creating) or cannot be written.

    Raises:
        CommandError: no store there and ``create`` is false, or a read-only mount.
    """
    if not is_lite(uri):
        return
    path = Path(uri).expanduser()
    if not create and not path.exists():
        raise CommandError(
            f"no store at {uri}: check --uri (only demo and import create a store)"
        )
    if read_only(path):
        raise CommandError(
            f"{uri} is on a read-only file system: Milvus Lite writes a lock and a "
            "log beside its data even to read; copy the store somewhere writable"
        )


def require_namespace(memory: Any, namespace: str) -> None:
    """Refuse a namespace that holds no memories, naming the ones that do.

    Raises:
        CommandError: (exit 1) the namespace is unknown.
    """
    if memory.list_memories(namespace, history=True, limit=1):
        return
    known = memory.namespaces()
    listed = ", ".join(repr(n) for n in known[:20]) or "none"
    more = f" and {len(known) - 20} more" if len(known) > 20 else ""
    raise CommandError(
        f"no memories in namespace {namespace!r}; known namespaces: {listed}{more} "
        "(hindsight-lg namespaces lists them)",
        NOT_FOUND,
    )


def open_memory(
    args: argparse.Namespace,
    *,
    create: bool = False,
    known_namespace: bool = True,
    embeds: bool = True,
    warm: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Open the memory the common options describe.

    Args:
        args: parsed options (``uri``, ``embedder``, and ``namespace`` if any).
        create: the command writes a new store when none exists (demo, import);
            every other command refuses a ``--uri`` that names no store.
        known_namespace: refuse a ``--namespace`` that holds no memories
            (not checked when ``create``).
        embeds: the command embeds text (recall, capture, import). Commands
            that do not never load the embedding model, so they start in about
            the time it takes to import pymilvus.
        warm: load the model before returning (default: when ``embeds``);
            ``False`` for a server that must answer before the model is in.
        **kwargs: passed to :meth:`HindsightMemory.from_uri`.

    Raises:
        CommandError: see :func:`check_uri` and :func:`require_namespace`.
    """
    from hindsight_lg import HindsightMemory

    check_uri(args.uri, create=create)
    if not embeds:
        # A command that embeds nothing reads a few rows once and exits: the
        # read cache would first load whole namespaces (seconds at 10,000
        # memories) to answer what one filtered Milvus query answers.
        kwargs.setdefault("cache", False)
    # No --embedder: from_uri opens the store with the model it records, and
    # a model this machine lacks is only needed by a command that embeds.
    memory = HindsightMemory.from_uri(
        args.uri,
        embedder=args.embedder,
        warm_up=embeds if warm is None else warm,
        **kwargs,
    )
    namespace = getattr(args, "namespace", None)
    if namespace and known_namespace and not create:
        try:
            require_namespace(memory, namespace)
        except BaseException:
            memory.close()
            raise
    return memory
