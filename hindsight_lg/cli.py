"""The ``hindsight-lg`` command: demo, inspect, search, and maintain memory.

Each sub-command lives in ``hindsight_lg/_commands/<name>.py`` with a
``register(subparsers)`` function. The CLI, unlike the library, configures
structlog (key-value lines on stderr) and, when ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set, an OpenTelemetry SDK exporter.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence

COMMANDS = (
    "demo",
    "inspect",
    "lifecycle",
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
    # pymilvus logs harmless client-side warnings on every paged query.
    logging.getLogger("pymilvus").setLevel(logging.ERROR)


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
    parser = argparse.ArgumentParser(
        prog="hindsight-lg", description=__doc__.split("\n")[0]
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"hindsight_lg._commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose)
    _configure_tracing()
    from hindsight_lg.errors import HindsightError

    try:
        return int(args.func(args) or 0)
    except HindsightError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
