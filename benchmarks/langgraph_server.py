"""The assistant template on ``langgraph dev``: start-up, run latency, capture lag.

Starts ``langgraph dev`` on ``examples/assistant`` (copied to a temporary
directory, Milvus Lite memory, offline fake model) and reports:

- start-up: from launching the process to the first healthy ``/ok``;
- run latency: ``client.runs.wait`` for one turn, p50 / p95 over N turns, each
  in a new thread of one of several users, and the server's own ``run_exec_ms``
  for the same runs (recall, model, capture hand-off, reflect); the difference
  is the dev server's queue, which picks up new runs about once a second;
- capture lag: from the end of a run to the moment ``client.store.search_items``
  lists the fact it told (captures run behind the turn).

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 python benchmarks/langgraph_server.py
    python benchmarks/langgraph_server.py --embedder minilm --turns 50
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from langgraph_sdk import get_sync_client

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(folder: Path, embedder: str) -> tuple[subprocess.Popen[bytes], str, float]:
    """Launch ``langgraph dev`` in ``folder``; returns process, URL, start-up seconds."""
    port = _free_port()
    env = {
        **os.environ,
        "HINDSIGHT_URI": str(folder.parent / "hindsight.db"),
        "HINDSIGHT_CHECKPOINTS": str(folder.parent / "checkpoints.sqlite"),
        "HINDSIGHT_EMBEDDER": embedder,
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    }
    env.pop("HINDSIGHT_CHAT_MODEL", None)
    langgraph = Path(sys.executable).parent / "langgraph"
    command = [str(langgraph), "dev", "--no-browser", "--no-reload"]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    log = (folder.parent / "server.log").open("wb")
    began = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT
    )
    url = f"http://127.0.0.1:{port}"
    while process.poll() is None:
        try:
            if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                return process, url, time.perf_counter() - began
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit(f"langgraph dev exited; see {folder.parent / 'server.log'}")


def turn(client: Any, user: str, text: str) -> float:
    """One run in a new thread of ``user``; returns its latency in seconds."""
    thread = client.threads.create()
    began = time.perf_counter()
    client.runs.wait(
        thread["thread_id"],
        "assistant",
        input={"messages": [{"role": "user", "content": text}]},
        config={"configurable": {"user_id": user}},
    )
    return time.perf_counter() - began


def capture_lag(client: Any, user: str, marker: str) -> float:
    """Seconds from the end of a run telling ``marker`` until the store lists it."""
    turn(client, user, f"My locker code is {marker}.")
    began = time.perf_counter()
    while time.perf_counter() - began < 60:
        found = client.store.search_items(("memories", user), limit=100)["items"]
        if any(marker in str(item["value"].get("content")) for item in found):
            return time.perf_counter() - began
        time.sleep(0.01)
    return float("nan")


def exec_ms(log: Path) -> list[float]:
    """``run_exec_ms`` of every run, as the server logged it."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace"))
    return [float(v) for v in re.findall(r"run_exec_ms=(\d+)", plain)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--users", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "assistant"
        shutil.copytree(EXAMPLES / "assistant", folder)
        process, url, startup = start(folder, args.embedder)
        try:
            client = get_sync_client(url=url)
            turn(client, "warm-up", "Hello there.")
            latencies = [
                turn(client, f"user-{i % args.users}", f"I like topic number {i}.")
                for i in range(args.turns)
            ]
            lags = [capture_lag(client, f"user-{i}", f"{4711 + i}") for i in range(5)]
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=60)
        executed = exec_ms(Path(tmp) / "server.log")[1 : 1 + args.turns]
    print(f"embedder {args.embedder}: start-up {startup:.1f} s")
    print(
        f"run latency over {args.turns} turns: p50 {statistics.median(latencies) * 1000:.0f} ms,"
        f" p95 {percentile(latencies, 0.95) * 1000:.0f} ms"
    )
    print(
        f"server-side run_exec_ms, same turns: p50 {statistics.median(executed):.0f} ms,"
        f" p95 {percentile(executed, 0.95):.0f} ms"
    )
    print(
        f"capture lag (run end -> listed by the store API), 5 runs: "
        f"median {statistics.median(lags) * 1000:.0f} ms, max {max(lags) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
