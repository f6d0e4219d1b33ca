"""A real Arize Phoenix server receives the example chatbot's traces.

Phoenix pins many packages, so it lives in a virtualenv of its own; point
``HINDSIGHT_PHOENIX`` at its ``phoenix`` executable (or put one on PATH)::

    python -m venv /tmp/phoenix-venv && /tmp/phoenix-venv/bin/pip install arize-phoenix
    HINDSIGHT_PHOENIX=/tmp/phoenix-venv/bin/phoenix pytest -m phoenix
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.phoenix

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "observability" / "phoenix_trace.py"
TURNS = 5  # user messages in the example's scripted conversation


def _phoenix_bin() -> str | None:
    return os.environ.get("HINDSIGHT_PHOENIX") or shutil.which("phoenix")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_healthy(base: str, proc: subprocess.Popen[bytes], wait_s: float) -> None:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"phoenix serve exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{base}/healthz", timeout=5):
                return
        except OSError:
            time.sleep(1.0)
    raise TimeoutError(f"Phoenix not healthy at {base} after {wait_s} s")


@pytest.fixture(scope="module")
def phoenix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A ``phoenix serve`` on 127.0.0.1 with its working dir in a temp dir."""
    exe = _phoenix_bin()
    if exe is None:
        pytest.skip(
            "Arize Phoenix is not installed: pip install arize-phoenix in a "
            "separate virtualenv and set HINDSIGHT_PHOENIX to its phoenix executable"
        )
    port, grpc = _free_port(), _free_port()
    work = tmp_path_factory.mktemp("phoenix")
    env = {
        **os.environ,
        "PHOENIX_WORKING_DIR": str(work),
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    with open(work / "serve.log", "wb") as log:
        proc = subprocess.Popen([exe, "serve"], env=env, stdout=log, stderr=log)
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(base, proc, wait_s=300)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def chatbot_run(
    phoenix: str, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """Run the example chatbot once against Phoenix; its project and JSON logs."""
    project = f"hindsight-test-{uuid.uuid4().hex[:8]}"
    uri = tmp_path_factory.mktemp("chatbot") / "memory.db"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    out = subprocess.run(
        [
            sys.executable,
            str(EXAMPLE),
            "--phoenix",
            phoenix,
            "--project",
            project,
            "--embedder",
            "hashing",
            "--uri",
            str(uri),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    logs = [json.loads(line) for line in out.stderr.splitlines() if line[:1] == "{"]
    return {"base": phoenix, "project": project, "logs": logs}


def _spans(run: dict[str, Any], **filters: str) -> list[dict[str, Any]]:
    query = urllib.parse.urlencode({"limit": 1000, **filters})
    project = urllib.parse.quote(run["project"])
    url = f"{run['base']}/v1/projects/{project}/spans?{query}"
    with urllib.request.urlopen(url, timeout=30) as response:
        data: list[dict[str, Any]] = json.load(response)["data"]
    return data


def _document_ids(span: dict[str, Any]) -> list[str]:
    attrs = span["attributes"]
    ids = []
    while f"retrieval.documents.{len(ids)}.document.id" in attrs:
        ids.append(attrs[f"retrieval.documents.{len(ids)}.document.id"])
    return ids


def test_recall_spans_arrive_as_retrievers_with_memory_ids(
    chatbot_run: dict[str, Any],
) -> None:
    """Phoenix lists one RETRIEVER recall span per turn, naming captured memories."""
    recalls = _spans(chatbot_run, name="hindsight.recall", span_kind="RETRIEVER")
    assert len(recalls) == TURNS
    assert {s["span_kind"] for s in recalls} == {"RETRIEVER"}
    captured = {
        i for e in chatbot_run["logs"] if e["event"] == "captured" for i in e["ids"]
    }
    recalled = [i for s in recalls for i in _document_ids(s)]
    assert recalled, "no recall span carried retrieval documents"
    assert set(recalled) <= captured


def test_recall_nests_under_the_langgraph_node(chatbot_run: dict[str, Any]) -> None:
    """Each recall span's parent is the graph's recall node, a CHAIN span."""
    recalls = _spans(chatbot_run, name="hindsight.recall")
    nodes = {s["context"]["span_id"]: s for s in _spans(chatbot_run, name="recall")}
    parents = [nodes.get(s["parent_id"]) for s in recalls]
    assert all(p is not None and p["span_kind"] == "CHAIN" for p in parents)


def test_embedding_and_path_spans_arrive_with_their_kinds(
    chatbot_run: dict[str, Any],
) -> None:
    """Embedding spans name the model; the dense path is a RETRIEVER."""
    embeds = _spans(chatbot_run, name="hindsight.embed")
    assert {s["span_kind"] for s in embeds} == {"EMBEDDING"}
    models = {s["attributes"]["embedding.model_name"] for s in embeds}
    assert len(models) == 1 and models.pop().startswith("hashing")
    dense = _spans(chatbot_run, name="hindsight.recall.dense")
    assert {s["span_kind"] for s in dense} == {"RETRIEVER"}


def test_log_lines_join_the_traces_phoenix_holds(chatbot_run: dict[str, Any]) -> None:
    """The chatbot's JSON log lines carry trace ids of traces Phoenix received."""
    logged = {e["trace_id"] for e in chatbot_run["logs"] if "trace_id" in e}
    traces = {s["context"]["trace_id"] for s in _spans(chatbot_run)}
    assert len(logged) == TURNS
    assert logged <= traces
