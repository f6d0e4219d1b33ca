"""The ``hindsight-lg`` command: demo, inspect, search, and maintain memory.

Each sub-command lives in ``hindsight_lg/_commands/<name>.py`` with a
``register(subparsers)`` function. The CLI, unlike the library, configures
structlog (key-value lines on stderr) and, when ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set, an OpenTelemetry SDK exporter.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import logging
import os
import sys
from collections.abc import Sequence

from hindsight_lg import __version__

FAILED = 2  # exit code of every usage, input or store error
DESCRIPTION = "The hindsight-lg command: demo, inspect, search, and maintain memory."

COMMANDS = (
    "demo",
    "inspect",
    "lifecycle",
    "rollback",
    "audit",
    "portability",
    "reembed",
    "bench",
    "panel",
)


def _configure_logging(verbose: bool) -> None:
    import structlog

    from hindsight_lg.telemetry import add_trace_context

    level = logging.DEBUG if verbose else logging.WARNING
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            add_trace_context,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    # pymilvus logs every failed call with its traceback, then raises; the
    # error line this command prints says it once (-v keeps pymilvus's).
    pymilvus_errors = logging.getLogger("pymilvus.decorators")
    if verbose:
        pymilvus_errors.removeFilter(_critical_only)
    else:
        pymilvus_errors.addFilter(_critical_only)


def _critical_only(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.CRITICAL


def _configure_tracing() -> None:
    if not os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter,
        )
    except ImportError:
        print(
            "tracing: pip install opentelemetry-exporter-otlp-proto-http",
            file=sys.stderr,
        )
        return
    provider = TracerProvider(
        resource=Resource.create({"service.name": "hindsight-lg"})
    )
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(prog="hindsight-lg", description=DESCRIPTION)
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {__version__}"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"hindsight_lg._commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code (see ``docs/cli.md``).

    0 done, 1 nothing to act on, 2 a usage, input or store error, 130
    interrupted. No input ends in a Python traceback: every failure is one
    ``error: ...`` line on stderr.
    """
    # argparse's --help (0) and usage errors (2) exit through SystemExit.
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    _configure_tracing()
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`hindsight-lg list | head -1`): what it wanted
        # was printed. Point stdout at /dev/null so the interpreter's final
        # flush cannot raise again, and end as a finished command.
        _silence_stdout()
        return 0
    except SystemExit as exc:
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return FAILED
    except BaseException as exc:
        message, code = describe(exc)
        print(f"error: {message}", file=sys.stderr)
        return code


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (tests)
        pass
    finally:
        os.close(devnull)


def describe(exc: BaseException) -> tuple[str, int]:
    """One line and an exit code for any error a command raised."""
    from hindsight_lg._commands import CommandError
    from hindsight_lg.errors import HindsightError

    if isinstance(exc, CommandError):
        return str(exc), exc.code
    if _read_only_fs(exc):
        return f"read-only file system: {_first_line(exc)}", FAILED
    if isinstance(exc, HindsightError):
        return _first_line(exc), FAILED
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}", FAILED
    if isinstance(exc, RecursionError):
        return "input nested too deeply to read", FAILED
    if isinstance(exc, (ValueError, TypeError, LookupError, UnicodeError)):
        text = exc.args[0] if exc.args else type(exc).__name__
        return _first_line(text), FAILED
    return f"unexpected {type(exc).__name__}: {_first_line(exc)}", FAILED


def _first_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0][:500] if lines else type(value).__name__


def _read_only_fs(exc: BaseException | None) -> bool:
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, OSError) and exc.errno == errno.EROFS:
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


if __name__ == "__main__":
    sys.exit(main())
