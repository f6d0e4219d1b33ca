"""A personal-assistant chatbot traced into Arize Phoenix, with a screenshot of a trace.

Each chat turn is one LangGraph run and one trace: OpenInference's LangChain
instrumentation makes the graph and its nodes CHAIN spans and the model an LLM
span; hindsight-lg's recall (RETRIEVER, one child per search path, embedding,
store calls) and capture (encode, embed, write, merge, supersede) nest under
the nodes that called them. Log lines are JSON with the trace and span ids.

Run Phoenix in its own virtualenv (it pins many packages)::

    python -m venv ~/phoenix && ~/phoenix/bin/pip install arize-phoenix
    PHOENIX_WORKING_DIR=/tmp/phoenix ~/phoenix/bin/phoenix serve

then, with ``pip install 'hindsight-lg[otel]'``::

    python examples/observability/phoenix_trace.py \\
        --screenshot docs/img/phoenix-recall-trace.png

The capture node here captures synchronously; ``hindsight_lg.nodes.add_hindsight``
captures on a background worker, whose capture span joins the same trace
under the capture node, starting once the worker writes.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import structlog
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from opentelemetry import trace
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from hindsight_lg import HindsightMemory
from hindsight_lg.telemetry import add_trace_context

USER = "maya"
TURNS = [
    ("I prefer green tea over coffee.", "Noted: green tea it is."),
    ("My sister Ana lives in Lisbon.", "Lisbon, lovely. I'll remember Ana."),
    ("I like Python for my side projects.", "Python is a fine choice."),
    ("I don't like Python anymore, Rust is my thing now.", "Got it: Rust now."),
    (
        "What should I drink this afternoon, and which language do I use?",
        "Green tea, and Rust for your side projects.",
    ),
]


def setup_tracing(endpoint: str, project: str) -> TracerProvider:
    """Export spans to ``endpoint`` over OTLP/HTTP and instrument LangChain.

    The project name travels as the ``openinference.project.name`` resource
    attribute, which Phoenix files traces under.
    """
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
        OTLPSpanExporter,
    )

    resource = Resource.create(
        {"service.name": "personal-assistant", "openinference.project.name": project}
    )
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint)))
    trace.set_tracer_provider(provider)
    try:
        from openinference.instrumentation.langchain import LangChainInstrumentor
    except ImportError:  # spans still arrive, only not under LangGraph's
        print("pip install openinference-instrumentation-langchain", file=sys.stderr)
    else:
        LangChainInstrumentor().instrument(tracer_provider=provider)
    return provider


def setup_logging() -> None:
    """JSON log lines on stderr, each with the trace and span of its moment."""
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            add_trace_context,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.JSONRenderer(),
        ],
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )
    logging.getLogger("pymilvus").setLevel(logging.ERROR)


def build_chatbot(memory: HindsightMemory) -> Any:
    """recall -> agent -> capture, the shape ``add_hindsight`` wires."""
    model = FakeListChatModel(responses=[reply for _, reply in TURNS])
    log = structlog.get_logger("personal_assistant")

    def recall(state: MessagesState) -> dict[str, Any]:
        query = str(state["messages"][-1].content)
        result = memory.recall(query, namespace=USER, timeout=5.0)
        log.info("recalled", count=len(result), ids=result.ids)
        return {"messages": [SystemMessage(result.to_prompt())]} if result else {}

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def capture(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        turn = [m for m in state["messages"] if isinstance(m, HumanMessage)][-1:]
        turn += [m for m in state["messages"] if isinstance(m, AIMessage)][-1:]
        thread = config["configurable"]["thread_id"]
        written = memory.capture(turn, namespace=USER, thread_id=thread)
        log.info("captured", ids=[r.id for r in written])
        return {}

    builder = StateGraph(MessagesState)
    builder.add_node("recall", recall)
    builder.add_node("agent", agent)
    builder.add_node("capture", capture)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "agent")
    builder.add_edge("agent", "capture")
    return builder.compile()


def chat(app: Any, thread: str) -> None:
    """Play the scripted conversation, one graph run per user message."""
    for text, _ in TURNS:
        out = app.invoke(
            {"messages": [HumanMessage(text)]},
            {"configurable": {"thread_id": thread}, "run_name": "personal_assistant"},
        )
        print(f"user: {text}\nassistant: {out['messages'][-1].content}")


def phoenix_spans(base: str, project: str, **filters: str) -> list[dict[str, Any]]:
    """Spans of a Phoenix project through its REST API (``GET /v1/projects/../spans``)."""
    query = urllib.parse.urlencode({"limit": 1000, **filters})
    url = f"{base}/v1/projects/{urllib.parse.quote(project)}/spans?{query}"
    with urllib.request.urlopen(url, timeout=30) as response:
        data: list[dict[str, Any]] = json.load(response)["data"]
    return data


def last_recall(base: str, project: str, wait_s: float = 60.0) -> dict[str, Any]:
    """The newest recall span Phoenix holds, once every turn's arrived."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            spans = phoenix_spans(base, project, name="hindsight.recall")
        except OSError:  # the project appears with its first span
            spans = []
        if len(spans) >= len(TURNS):
            return max(spans, key=lambda s: str(s["start_time"]))
        time.sleep(1.0)
    raise TimeoutError(f"no recall spans reached Phoenix at {base} in {wait_s} s")


def screenshot(url: str, out: Path, browser: str = "chromium") -> None:
    """Save a PNG of ``url`` taken with headless Chromium."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [
                browser,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                f"--user-data-dir={profile}",
                "--window-size=1500,950",
                "--virtual-time-budget=20000",
                f"--screenshot={out.resolve()}",
                url,
            ],
            check=True,
            capture_output=True,
            timeout=180,
        )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line options."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--phoenix", default="http://127.0.0.1:6006", help="Phoenix URL")
    p.add_argument("--project", default="hindsight-demo", help="Phoenix project")
    p.add_argument("--uri", default=None, help="memory URI (default: a new temp file)")
    p.add_argument("--embedder", default=None, help="hashing, minilm, ...")
    p.add_argument("--thread", default="thread-1")
    p.add_argument("--screenshot", type=Path, default=None, help="PNG to write")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Chat, export the traces, and optionally screenshot the last one."""
    args = parse_args(argv)
    provider = setup_tracing(f"{args.phoenix}/v1/traces", args.project)
    setup_logging()
    # Milvus Lite may still be writing right after close: the database stays.
    uri = args.uri or str(Path(tempfile.mkdtemp(prefix="hindsight-")) / "demo.db")
    with HindsightMemory.from_uri(uri, embedder=args.embedder) as memory:
        chat(build_chatbot(memory), args.thread)
    provider.force_flush()
    span = last_recall(args.phoenix, args.project)
    # Phoenix opens the span's trace with the span selected: its documents show.
    url = f"{args.phoenix}/redirects/spans/{span['context']['span_id']}"
    print(f"trace: {span['context']['trace_id']} recall span: {url}")
    if args.screenshot is not None:
        screenshot(url, args.screenshot)
        print(f"screenshot: {args.screenshot}")
    provider.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
