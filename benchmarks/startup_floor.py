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
        [--compare DIR]

Prints a Markdown table: median wall seconds and the ratio to the floor.
``--compare DIR`` times every start a second time with ``DIR`` (another
checkout of the package, e.g. ``git worktree add /tmp/before main``) first on
``PYTHONPATH``, interleaved in the same run, so both columns share one floor.

Bytecode is cached as an installed package has it: the children run without
``PYTHONDONTWRITEBYTECODE``, so a source tree's modules compile once (in the
demo run) rather than at every start.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from hindsight_lg.bench.startup import NAMESPACE, _first_id

PY = sys.executable
Env = dict[str, str]


def _env(first: str | None = None) -> Env:
    """The children's environment: bytecode cached; ``first`` ahead on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if first is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (first, env.get("PYTHONPATH")) if p
        )
    return env


def wall(argv: list[str], env: Env) -> float:
    """Seconds one process takes, start to exit."""
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, timeout=600, env=env)
    return time.perf_counter() - start


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


def _until_up(argv: list[str], url: str, env: Env, cwd: str | None = None) -> float:
    """Seconds from starting ``argv`` to the first 200 from ``url``; then stop it."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
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


def _panel(db: str, env: Env) -> float:
    port = _port()
    argv = _cli("panel", "--uri", db, "--port", str(port))
    return _until_up(argv, f"http://127.0.0.1:{port}/", env)


def _server(folder: Path, env: Env) -> float:
    import shutil

    target = folder / f"assistant-{len(list(folder.glob('assistant-*')))}"
    shutil.copytree(Path(__file__).parents[1] / "examples" / "assistant", target)
    port = _port()
    argv = [PY, "-m", "langgraph_cli", "dev", "--port", str(port), "--no-browser"]
    return _until_up(argv, f"http://127.0.0.1:{port}/ok", env, cwd=str(target))


def _starts(db: str, folder: Path, server: bool) -> dict[str, Callable[[Env], float]]:
    memory_id = _first_id(db)
    named = ["-n", NAMESPACE, "--uri", db]
    starts: dict[str, Callable[[Env], float]] = {
        "from_uri (defaults: warm-up)": lambda e: wall(_from_uri(db, True), e),
        "from_uri(warm_up=False)": lambda e: wall(_from_uri(db, False), e),
        "cli list": lambda e: wall(_cli("list", *named), e),
        "cli stats": lambda e: wall(_cli("stats", *named), e),
        "cli audit": lambda e: wall(_cli("audit", memory_id, *named), e),
        "cli recall (embeds)": lambda e: wall(_cli("recall", "Redis", *named), e),
        "cli explain (embeds)": lambda e: wall(_cli("explain", "Redis", *named), e),
        "panel: first page": lambda e: _panel(db, e),
    }
    if server:
        starts["langgraph dev: /ok"] = lambda e: _server(folder, e)
    return starts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--server", action="store_true", help="also langgraph dev")
    parser.add_argument(
        "--compare", metavar="DIR", help="also time the package checked out in DIR"
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="startup-"))
    db = str(folder / "demo.db")
    envs = {"now": _env()}
    if args.compare:
        envs = {"compared": _env(str(Path(args.compare).resolve())), **envs}
    for env in envs.values():  # compiles each tree's bytecode once
        subprocess.run(_cli("--help"), capture_output=True, check=True, env=env)
    subprocess.run(_cli("demo", "--uri", db), capture_output=True, check=True)
    starts = _starts(db, folder, args.server)
    floors: list[float] = []
    spent: dict[tuple[str, str], list[float]] = {
        (name, tree): [] for name in starts for tree in envs
    }
    for _ in range(args.repeats):
        for name, start in starts.items():
            for tree, env in envs.items():
                floors.append(wall(_floor(db), envs["now"]))
                spent[name, tree].append(start(env))
    floor = statistics.median(floors)
    heads = " | ".join(f"{tree}: wall s (median) | {tree}: x floor" for tree in envs)
    print(f"| start | {heads} |")
    print("|---" * (1 + 2 * len(envs)) + "|")
    ones = " | ".join(f"{floor:.2f} | 1.00" for _ in envs)
    print(f"| floor: import pymilvus + start Milvus Lite | {ones} |")
    for name in starts:
        cells = []
        for tree in envs:
            median = statistics.median(spent[name, tree])
            cells.append(f"{median:.2f} | {median / floor:.2f}")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
