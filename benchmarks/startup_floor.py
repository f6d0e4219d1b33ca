"""Every start against its floor, measured in one run.

The floor is what any start on a Milvus Lite file pays: a fresh Python
process that imports pymilvus and starts Milvus Lite on the file (open a
client, close it). Against it, in the same run and interleaved with it so
both see the same machine load:

- ``HindsightMemory.from_uri(db)`` with its defaults (loads the model: warm-up)
  and with ``warm_up=False``;
- CLI commands that embed nothing (``list``, ``stats``, ``audit``) and those
  that do (``recall``, ``explain``);
- the panel: process start to the first answered page;
- ``langgraph dev`` on the assistant template (``--server``; slow): process
  start to ``/ok``.

Usage::

    OMP_NUM_THREADS=1 python benchmarks/startup_floor.py [--repeats 3] [--server]

Prints a Markdown table: median wall seconds and the ratio to the floor.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from hindsight_lg.bench.startup import NAMESPACE, _first_id, wall

PY = sys.executable


def _cli(*args: str) -> list[str]:
    return [PY, "-m", "hindsight_lg.cli", *args]


def _floor(db: str) -> list[str]:
    code = f"import pymilvus; c = pymilvus.MilvusClient({db!r}); c.close()"
    return [PY, "-c", code]


def _from_uri(db: str, warm: bool) -> list[str]:
    code = (
        "from hindsight_lg import HindsightMemory; "
        f"HindsightMemory.from_uri({db!r}, warm_up={warm}).close()"
    )
    return [PY, "-c", code]


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _until_up(argv: list[str], url: str, cwd: str | None = None) -> float:
    """Seconds from starting ``argv`` to the first 200 from ``url``; then stop it."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while time.perf_counter() - start < 600:
            try:
                if httpx.get(url, timeout=5).status_code == 200:
                    return time.perf_counter() - start
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise TimeoutError(url)
    finally:
        process.terminate()
        process.wait(timeout=60)


def _panel(db: str) -> float:
    port = _port()
    argv = _cli("panel", "--uri", db, "--port", str(port))
    return _until_up(argv, f"http://127.0.0.1:{port}/")


def _server(folder: Path) -> float:
    import shutil

    target = folder / "assistant"
    shutil.copytree(Path(__file__).parents[1] / "examples" / "assistant", target)
    port = _port()
    argv = [PY, "-m", "langgraph_cli", "dev", "--port", str(port), "--no-browser"]
    return _until_up(argv, f"http://127.0.0.1:{port}/ok", cwd=str(target))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--server", action="store_true", help="also langgraph dev")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="startup-"))
    db = str(folder / "demo.db")
    subprocess.run(_cli("demo", "--uri", db), capture_output=True, check=True)
    memory_id = _first_id(db)
    named = ["-n", NAMESPACE, "--uri", db]
    starts: dict[str, Callable[[], float]] = {
        "from_uri (defaults: warm-up)": lambda: wall(_from_uri(db, True)),
        "from_uri(warm_up=False)": lambda: wall(_from_uri(db, False)),
        "cli list": lambda: wall(_cli("list", *named)),
        "cli stats": lambda: wall(_cli("stats", *named)),
        "cli audit": lambda: wall(_cli("audit", memory_id, *named)),
        "cli recall (embeds)": lambda: wall(_cli("recall", "Redis", *named)),
        "cli explain (embeds)": lambda: wall(_cli("explain", "Redis", *named)),
        "panel: first page": lambda: _panel(db),
    }
    if args.server:
        starts["langgraph dev: /ok"] = lambda: _server(folder)
    floors: list[float] = []
    spent: dict[str, list[float]] = {name: [] for name in starts}
    for _ in range(args.repeats):
        for name, start in starts.items():
            floors.append(wall(_floor(db)))
            spent[name].append(start())
    floor = statistics.median(floors)
    print("| start | wall s (median) | x floor |")
    print("|---|---|---|")
    print(f"| floor: import pymilvus + start Milvus Lite | {floor:.2f} | 1.00 |")
    for name, values in spent.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.2f} | {median / floor:.2f} |")


if __name__ == "__main__":
    main()
