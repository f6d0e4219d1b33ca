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
- ``langgraph dev`` on the assistant template (``--server``; slow), over a
  copy of the demo store: process start to ready (``/ok`` answers and the
  assistant is listed), and to the first run answered (its recall must find
  the demo's memories; the count of those that did is printed).

Usage::

    OMP_NUM_THREADS=1 python benchmarks/startup_floor.py [--repeats 3] [--server]
        [--compare DIR] [--no-model] [--starts "cli list,cli recall"]

The starts that load the embedding model are also set against a second
floor, the first plus loading the store's model (the packaged MiniLM and e5,
MiniLM in numpy: the cheapest way to its vectors) and embedding one query:
what any process that embeds pays.

Last, ``recall`` against ``list`` on the same store (issue 46: at most 2x),
with the floors under both: ``python -c pass``, ``import hindsight_lg`` and
the store's floor. ``--starts`` keeps only the starts whose names contain one
of the given pieces (``"cli list,cli recall"`` for just that comparison).

Prints a Markdown table: median wall seconds and the ratio to the floor, and
median CPU seconds (user + system of the process) and their ratio to the
floor's. On a shared, loaded machine the CPU figures move far less than the
wall ones; the panel and the server have none (they run until stopped).
``--server`` needs ``langgraph-cli[inmem]`` (the ``server`` extra).
``--compare DIR`` times every start a second time with ``DIR`` (another
checkout of the package, e.g. ``git worktree add /tmp/before main``) first on
``PYTHONPATH``, interleaved in the same run, so both columns share one floor.

Bytecode is cached as an installed package has it: each tree is compiled
first, and the children run without ``PYTHONDONTWRITEBYTECODE``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from hindsight_lg.bench.startup import NAMESPACE, _first_id

PY = sys.executable
Env = dict[str, str]
Spent = tuple[float, float | None]  # wall seconds, CPU seconds (None: not measured)
_COMPILE = (
    "import compileall, os, hindsight_lg; "
    "compileall.compile_dir(os.path.dirname(hindsight_lg.__file__), quiet=1)"
)


def _env(first: str | None = None) -> Env:
    """The children's environment: bytecode cached; ``first`` ahead on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if first is not None:
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (first, env.get("PYTHONPATH")) if p
        )
    return env


def wall(argv: list[str], env: Env) -> Spent:
    """Wall and CPU seconds one process takes, start to exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, capture_output=True, check=True, timeout=600, env=env)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu


def _cli(*args: str) -> list[str]:
    return [PY, "-m", "hindsight_lg.cli", *args]


def _floor(db: str) -> list[str]:
    code = f"import pymilvus; c = pymilvus.MilvusClient({db!r}); c.close()"
    return [PY, "-c", code]


def _model_floor(db: str) -> list[str]:
    """The floor of a start that embeds: the store's, plus the model's own.

    Load the demo store's model as a command does (the packaged MiniLM and
    e5; MiniLM in numpy when it can, else through FlagEmbedding) and embed
    one query.
    """
    code = (
        f"import pymilvus; c = pymilvus.MilvusClient({db!r}); "
        "from hindsight_lg.embeddings import BILINGUAL_ID, embed_queries, "
        "embedder_from_name; "
        "embed_queries(embedder_from_name(BILINGUAL_ID), ['Redis']); c.close()"
    )
    return [PY, "-c", code]


# The floors of the recall-against-list summary, beside the store's.
BARE = {"python -c pass": "pass", "import hindsight_lg": "import hindsight_lg"}
LIST, RECALL = "cli list", "cli recall (embeds)"


# Starts that load the embedding model, measured against the model's floor too.
EMBEDS = ("from_uri (defaults: warm-up)", "cli recall (embeds)", "cli explain (embeds)")


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


def _panel(db: str, env: Env) -> Spent:
    port = _port()
    argv = _cli("panel", "--uri", db, "--port", str(port))
    return _until_up(argv, f"http://127.0.0.1:{port}/", env), None


QUESTION = "What does Maya think about Redis for caching?"  # the demo's question


class DevServer:
    """``langgraph dev`` on the assistant template over a copy of the demo store.

    One launch gives two figures: ready (``/ok`` answers and the assistant is
    listed: what the server does before serving) and the first run answered
    (a turn whose recall must find the demo's memories, so a recall that timed
    out shows). The template comes from the tree under test, the first entry
    of the child's ``PYTHONPATH`` when it has one, else this checkout.
    """

    def __init__(self, folder: Path, db: str) -> None:
        self.folder, self.db = folder, db
        self.first_runs: dict[str, list[Spent]] = {}
        self.answers: list[str] = []

    def ready(self, env: Env) -> Spent:
        """Launch, time ready and the first run; keep the second for later."""
        tree = _tree(env)
        target = self.folder / f"server-{len(list(self.folder.glob('server-*')))}"
        shutil.copytree(tree / "examples" / "assistant", target / "assistant")
        shutil.copytree(self.db, target / "hindsight.db")
        env = {
            **env,
            "HINDSIGHT_URI": str(target / "hindsight.db"),
            "HINDSIGHT_CHECKPOINTS": str(target / "checkpoints.sqlite"),
            "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        }
        env.pop("HINDSIGHT_CHAT_MODEL", None)
        port = _port()
        url = f"http://127.0.0.1:{port}"
        argv = [PY, "-m", "langgraph_cli", "dev", "--port", str(port)]
        argv += ["--host", "127.0.0.1", "--no-browser", "--no-reload"]
        start = time.perf_counter()
        process = subprocess.Popen(
            argv,
            cwd=target / "assistant",
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            _poll(lambda: _listed(url), start)
            ready = time.perf_counter() - start
            answer = _first_run(url)
            first = time.perf_counter() - start
        finally:
            process.terminate()
            process.wait(timeout=60)
        self.answers.append(answer)
        self.first_runs.setdefault(env.get("PYTHONPATH", ""), []).append((first, None))
        return ready, None

    def first_run(self, env: Env) -> Spent:
        """The first-run figure of the launch :meth:`ready` made for this tree."""
        return self.first_runs[env.get("PYTHONPATH", "")].pop(0)


def _tree(env: Env) -> Path:
    here = Path(__file__).resolve().parents[1]
    first = env.get("PYTHONPATH", "").split(os.pathsep)[0]
    return Path(first) if first and (Path(first) / "examples").is_dir() else here


def _poll(ready: Callable[[], bool], start: float) -> None:
    while time.perf_counter() - start < 600:
        try:
            if ready():
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise TimeoutError("langgraph dev did not get ready")


def _listed(url: str) -> bool:
    if httpx.get(f"{url}/ok", timeout=5).status_code != 200:
        return False
    found = httpx.post(f"{url}/assistants/search", json={}, timeout=5)
    return found.status_code == 200 and len(found.json()) > 0


def _first_run(url: str) -> str:
    """One turn as the demo's user; returns the answer (it quotes what recall found)."""
    thread = httpx.post(f"{url}/threads", json={}, timeout=30).json()
    body = {
        "assistant_id": "assistant",
        "input": {"messages": [{"role": "user", "content": QUESTION}]},
        "config": {"configurable": {"user_id": NAMESPACE}},
    }
    done = httpx.post(
        f"{url}/threads/{thread['thread_id']}/runs/wait", json=body, timeout=600
    )
    done.raise_for_status()
    return str(done.json()["messages"][-1]["content"])


def _starts(
    db: str, folder: Path, server: DevServer | None
) -> dict[str, Callable[[Env], Spent]]:
    memory_id = _first_id(db)
    named = ["-n", NAMESPACE, "--uri", db]
    starts: dict[str, Callable[[Env], Spent]] = {
        "from_uri (defaults: warm-up)": lambda e: wall(_from_uri(db, True), e),
        "from_uri(warm_up=False)": lambda e: wall(_from_uri(db, False), e),
        "cli list": lambda e: wall(_cli("list", *named), e),
        "cli stats": lambda e: wall(_cli("stats", *named), e),
        "cli audit": lambda e: wall(_cli("audit", memory_id, *named), e),
        "cli recall (embeds)": lambda e: wall(_cli("recall", "Redis", *named), e),
        "cli explain (embeds)": lambda e: wall(_cli("explain", "Redis", *named), e),
        "panel: first page": lambda e: _panel(db, e),
    }
    if server is not None:
        starts["langgraph dev: ready"] = server.ready
        starts["langgraph dev: first run answered"] = server.first_run
    return starts


def _args() -> argparse.Namespace:
    """The command line: see the module notes for what each option times."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--server", action="store_true", help="also langgraph dev")
    parser.add_argument(
        "--compare", metavar="DIR", help="also time the package checked out in DIR"
    )
    parser.add_argument(
        "--no-model",
        action="store_true",
        help="only the starts that load no model (quicker, so more repeats fit)",
    )
    parser.add_argument(
        "--starts",
        metavar="PIECES",
        help='only the starts whose names contain one of these, e.g. "cli list,cli recall"',
    )
    return parser.parse_args()


def _selected(
    starts: dict[str, Callable[[Env], Spent]], args: argparse.Namespace
) -> dict[str, Callable[[Env], Spent]]:
    """The starts ``--no-model`` and ``--starts`` leave."""
    pieces = [p.strip() for p in (args.starts or "").split(",") if p.strip()]
    return {
        name: start
        for name, start in starts.items()
        if not (args.no_model and name in EMBEDS)
        and (not pieces or any(p in name for p in pieces))
    }


@dataclass
class Timings:
    """Every measurement of one run, floors beside the starts they are under."""

    floors: list[Spent] = field(default_factory=list)
    model_floors: list[Spent] = field(default_factory=list)
    # (floor name, tree) and (start name, tree) -> their measurements
    bare: dict[tuple[str, str], list[Spent]] = field(default_factory=dict)
    spent: dict[tuple[str, str], list[Spent]] = field(default_factory=dict)


def _measure(
    db: str,
    starts: dict[str, Callable[[Env], Spent]],
    envs: dict[str, Env],
    repeats: int,
) -> Timings:
    """Time every start per tree, each after its floors, ``repeats`` rounds."""
    timed = Timings()
    for _ in range(repeats):
        for name, start in starts.items():
            for tree, env in envs.items():
                timed.floors.append(wall(_floor(db), envs["now"]))
                if name in EMBEDS:
                    timed.model_floors.append(wall(_model_floor(db), envs["now"]))
                timed.spent.setdefault((name, tree), []).append(start(env))
        for tree, env in envs.items():
            for label, code in BARE.items():
                timed.bare.setdefault((label, tree), []).append(
                    wall([PY, "-c", code], env)
                )
    return timed


def main() -> None:
    """Build the demo store, time the starts against their floors, print the tables."""
    args = _args()
    folder = Path(tempfile.mkdtemp(prefix="startup-"))
    db = str(folder / "demo.db")
    envs = {"now": _env()}
    if args.compare:
        envs = {"compared": _env(str(Path(args.compare).resolve())), **envs}
    # A child's first import path is its working directory (``-c``, ``-m``):
    # run them outside any checkout, or a checkout here shadows ``--compare``.
    os.chdir(folder)
    for env in envs.values():
        subprocess.run([PY, "-c", _COMPILE], capture_output=True, check=True, env=env)
    subprocess.run(_cli("demo", "--uri", db), capture_output=True, check=True)
    server = DevServer(folder, db) if args.server else None
    starts = _selected(_starts(db, folder, server), args)
    timed = _measure(db, starts, envs, args.repeats)
    label = "floor: import pymilvus + start Milvus Lite"
    _table(label, timed.floors, timed.spent, list(starts), list(envs))
    if timed.model_floors:
        print()
        label = "model floor: the floor + load the store's model, embed one query"
        embeds = [n for n in starts if n in EMBEDS]
        _table(label, timed.model_floors, timed.spent, embeds, list(envs))
    if LIST in starts and RECALL in starts:
        print()
        _recall_table(timed, list(envs))
    if server is not None:
        recalled = sum("From memory" in a for a in server.answers)
        print(
            f"\nfirst runs that recalled the demo's memories: {recalled}"
            f" of {len(server.answers)}"
        )


def _recall_table(timed: Timings, trees: list[str]) -> None:
    """Print ``recall`` against ``list`` on the same store, floors first.

    The mark (issue 46) is recall within 2x list, wall time, one run.
    """
    print("| start | " + " | ".join(f"{t}: wall s | {t}: x list" for t in trees) + " |")
    print("|---" * (1 + 2 * len(trees)) + "|")
    rows: list[tuple[str, dict[str, list[Spent]]]] = [
        (label, {t: timed.bare[label, t] for t in trees}) for label in BARE
    ]
    rows.append(
        (
            "floor: import pymilvus + start Milvus Lite",
            dict.fromkeys(trees, timed.floors),
        )
    )
    rows += [
        (name, {t: timed.spent[name, t] for t in trees}) for name in (LIST, RECALL)
    ]
    listed = {t: _medians(timed.spent[LIST, t])[0] for t in trees}
    for label, values in rows:
        cells = []
        for tree in trees:
            seconds = _medians(values[tree])[0]
            cells.append(f"{seconds:.2f} | {seconds / listed[tree]:.2f}")
        print(f"| {label} | {' | '.join(cells)} |")


def _medians(values: list[Spent]) -> tuple[float, float | None]:
    cpus = [c for _, c in values if c is not None]
    return (
        statistics.median(w for w, _ in values),
        statistics.median(cpus) if cpus else None,
    )


def _table(
    label: str,
    floors: list[Spent],
    spent: dict[tuple[str, str], list[Spent]],
    names: list[str],
    trees: list[str],
) -> None:
    """Print a Markdown table: per tree, wall and CPU medians over the floor's."""
    floor_wall, floor_cpu = _medians(floors)
    assert floor_cpu is not None
    heads = " | ".join(
        f"{t}: wall s | {t}: x floor | {t}: CPU s | {t}: x floor CPU" for t in trees
    )
    print(f"| start | {heads} |")
    print("|---" * (1 + 4 * len(trees)) + "|")
    ones = f"{floor_wall:.2f} | 1.00 | {floor_cpu:.2f} | 1.00"
    print(f"| {label} | " + " | ".join(ones for _ in trees) + " |")
    for name in names:
        cells = []
        for tree in trees:
            w, c = _medians(spent[name, tree])
            cpu = "- | -" if c is None else f"{c:.2f} | {c / floor_cpu:.2f}"
            cells.append(f"{w:.2f} | {w / floor_wall:.2f} | {cpu}")
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
