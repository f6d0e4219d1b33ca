"""``bench locomo|longchat|scale|overhead``: retrieval quality, scale, turn overhead."""

from __future__ import annotations

import argparse
import importlib.util
import json
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hindsight_lg.bench.scale import ScaleConfig

DEFAULT_DATA = "../shared/data/locomo/locomo10.json"
DEFAULT_LONGCHAT = "../shared/data/realmem"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``bench`` and its three benchmarks."""
    bench = sub.add_parser(
        "bench", help="benchmarks: locomo, longchat, scale, overhead"
    )
    kinds = bench.add_subparsers(dest="bench", required=True, metavar="BENCH")

    p = kinds.add_parser(
        "locomo", help="LoCoMo evidence recall and answer coverage against baselines"
    )
    p.add_argument("--data", default=DEFAULT_DATA, help="path to locomo10.json")
    p.add_argument("--budget", default="250,500,1000", help="token budgets")
    p.add_argument(
        "--embedder",
        default="minilm",
        help="hashing, minilm, e5, minilm+e5, bge-m3, path",
    )
    p.add_argument("--conversations", default="0-9", help="e.g. 0-4 or 0,3,5-9")
    p.add_argument("--questions", type=int, default=None, help="per conversation")
    p.add_argument("--turns", type=int, default=None, help="replay only the first N")
    p.add_argument("--uri", default=":memory:", help=":memory:, lite, or a URI")
    p.add_argument(
        "-k", type=int, default=None, help="memories at most (default: recall's own)"
    )
    p.add_argument("--out", default="bench-out/locomo", help="report folder")
    p.add_argument("--no-cache", action="store_true", help="do not cache embeddings")
    _tuning(p)
    p.set_defaults(func=cmd_locomo)
    _longchat(kinds)

    p = kinds.add_parser("scale", help="capture and recall at 1k/10k/100k memories")
    p.add_argument("--sizes", default="1000,10000", help="e.g. 1000,10000,100000")
    p.add_argument("--namespaces", type=int, default=100)
    p.add_argument("--queries", type=int, default=200, help="recalls per size")
    p.add_argument("--embedder", default="hashing", help="hashing or minilm")
    p.add_argument("--out", default="bench-out/scale", help="report folder")
    p.add_argument(
        "--single", type=int, default=10000, help="one-namespace row size (0: none)"
    )
    p.add_argument("--captures", type=int, default=600, help="captured per size")
    p.add_argument(
        "--no-cli", action="store_true", help="skip timing the CLI's start-up"
    )
    p.add_argument(
        "--uri",
        help="a Milvus server (http://host:19530): run every size there, in "
        "fresh collections dropped afterwards",
    )
    p.add_argument(
        "--server-dir", help="the server's data folder, to report its disk use"
    )
    p.add_argument(
        "--no-tenancy",
        action="store_true",
        help="on a server, skip the raw-search comparison of plain field and "
        "partition key (it copies the collection)",
    )
    p.set_defaults(func=cmd_scale)

    p = kinds.add_parser("overhead", help="latency memory adds to a LangGraph turn")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="options for the script")
    p.set_defaults(func=cmd_overhead)


def _tuning(p: argparse.ArgumentParser) -> None:
    """``--policy`` and ``--merge``, shared by the retrieval benches."""
    p.add_argument(
        "--policy",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="set a recall Policy field for this run (repeatable; JSON values, "
        "e.g. near_share=0.5); the report labels the run as tuned",
    )
    p.add_argument(
        "--merge",
        nargs="+",
        default=None,
        metavar="DIR",
        help="report the scores of earlier runs (their --out) instead of running",
    )


def _longchat(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = kinds.add_parser(
        "longchat",
        help="long chats (RealMem): causal recall against hybrid baselines",
    )
    p.add_argument(
        "--data",
        default=DEFAULT_LONGCHAT,
        help="a folder of <Persona>_dialogues_256k.json files, or one file",
    )
    p.add_argument("--personas", default=None, help="e.g. Oliver_Smith,Pak_Budi")
    p.add_argument("--sessions", type=int, default=None, help="first N per persona")
    p.add_argument("--budget", type=int, default=500, help="token budget")
    p.add_argument("--embedder", default="minilm", help="hashing, minilm, e5, path")
    p.add_argument("--out", default="bench-out/longchat", help="report folder")
    p.add_argument("--no-cache", action="store_true", help="do not cache embeddings")
    _tuning(p)
    p.set_defaults(func=cmd_longchat)


def _ints(spec: str) -> tuple[int, ...]:
    try:
        values = tuple(int(x) for x in spec.split(",") if x.strip())
    except ValueError:
        raise SystemExit(
            f"error: expected comma-separated integers, got {spec!r}"
        ) from None
    if not values or min(values) <= 0:
        raise SystemExit(f"error: expected positive integers, got {spec!r}")
    return values


def _command_line() -> str:
    return "hindsight-lg " + " ".join(shlex.quote(a) for a in sys.argv[1:])


def cmd_locomo(args: argparse.Namespace) -> int:
    """Run LoCoMo, write the report and plots, print the headline table."""
    from hindsight_lg.bench.locomo import parse_range
    from hindsight_lg.bench.runner import (
        LocomoConfig,
        headline,
        load_scores,
        run_locomo,
        stderr_progress,
        tuned_policy,
        write_report,
    )

    cfg = LocomoConfig(
        data=Path(args.data),
        conversations=tuple(parse_range(args.conversations)),
        budgets=_ints(args.budget),
        embedder=args.embedder,
        uri=args.uri,
        out=Path(args.out),
        k=args.k,
        questions=args.questions,
        turns=args.turns,
        cache=not args.no_cache,
        policy=_policy_fields(args.policy),
    )
    try:
        tuned_policy(cfg.policy)  # a misspelt field fails before the replay
        if args.merge:
            run = load_scores([Path(d) for d in args.merge])
            convs = tuple(sorted({s.conversation for s in run.scores}))
            cfg = replace(cfg, conversations=convs, budgets=run.budgets)
        else:
            run = run_locomo(cfg, stderr_progress())
    except (FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    report = write_report(cfg, run, _command_line())
    print(headline(cfg, run))
    print(f"\nreport: {report}")
    return 0


def cmd_longchat(args: argparse.Namespace) -> int:
    """Run the long-chat bench, write the report after each chat, print the tables."""
    from hindsight_lg.bench.longchat_report import headline, write_report
    from hindsight_lg.bench.longchat_run import (
        LongChatConfig,
        load_scores,
        run_longchat,
    )
    from hindsight_lg.bench.runner import stderr_progress, tuned_policy

    for name in ("budget", "sessions"):
        if getattr(args, name) is not None and getattr(args, name) <= 0:
            raise SystemExit(f"error: --{name} takes a positive integer")
    personas = [p.strip() for p in (args.personas or "").split(",") if p.strip()]
    cfg = LongChatConfig(
        data=Path(args.data),
        personas=tuple(personas) or None,
        sessions=args.sessions,
        budget=args.budget,
        embedder=args.embedder,
        out=Path(args.out),
        cache=not args.no_cache,
        policy=_policy_fields(args.policy),
    )
    command = _command_line()
    try:
        tuned_policy(cfg.policy)  # a misspelt field fails before the replay
        if args.merge:
            run = load_scores([Path(d) for d in args.merge])
        else:
            run = run_longchat(
                cfg, stderr_progress(), lambda r: write_report(cfg, r, command)
            )
    except (FileNotFoundError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    report = write_report(cfg, run, command)
    print(headline(run))
    print(f"\nreport: {report}")
    return 0


def _policy_fields(pairs: list[str]) -> tuple[tuple[str, Any], ...]:
    """``["near_share=0.5"]`` as ``(("near_share", 0.5),)``; values are JSON."""
    out: list[tuple[str, Any]] = []
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name.strip():
            raise SystemExit(f"error: --policy takes FIELD=VALUE, not {pair!r}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            raise SystemExit(
                f"error: --policy {name}: {raw!r} is not a JSON value "
                "(numbers as 0.5, flags as true/false, text in double quotes)"
            ) from None
        out.append((name.strip(), value))
    return tuple(out)


def cmd_scale(args: argparse.Namespace) -> int:
    """Run the scale bench, write the report, print the table."""
    from hindsight_lg.bench.scale import ScaleConfig, run_scale
    from hindsight_lg.bench.scale_report import summary, write_scale_report

    if args.single < 0 or args.captures < 0:
        raise SystemExit("error: --single and --captures take 0 or more")
    cfg = ScaleConfig(
        sizes=_ints(args.sizes),
        namespaces=_ints(str(args.namespaces))[0],
        queries=_ints(str(args.queries))[0],
        embedder=args.embedder,
        out=Path(args.out),
        captures=args.captures,
        single=args.single,
        cli=not args.no_cli and not args.uri,
    )
    if args.uri:
        return _server_scale(args, cfg)
    run = run_scale(cfg)
    report = write_scale_report(cfg, run, _command_line())
    print(summary(cfg, run))
    print(f"\nreport: {report}")
    return 0


def _server_scale(args: argparse.Namespace, cfg: ScaleConfig) -> int:
    from hindsight_lg.bench.server_report import server_summary, write_server_report
    from hindsight_lg.bench.server_scale import ServerConfig, run_server_scale

    if "://" not in args.uri:
        raise SystemExit("error: --uri takes a server address (http://host:19530)")
    if args.out == "bench-out/scale":
        cfg = replace(cfg, out=Path("bench-out/scale-server"))
    server = ServerConfig(
        args.uri,
        replace(cfg, single=0, held_pass=True),
        server_dir=Path(args.server_dir) if args.server_dir else None,
        tenancy=not args.no_tenancy,
    )
    run = run_server_scale(server)
    report = write_server_report(server, run, _command_line())
    print(server_summary(run))
    print(f"\nreport: {report}")
    return 0


def overhead_script() -> Path | None:
    """``benchmarks/overhead.py`` of the source tree, if this is one."""
    for root in (Path.cwd(), Path(__file__).resolve().parents[2]):
        path = root / "benchmarks" / "overhead.py"
        if path.exists():
            return path
    return None


def cmd_overhead(args: argparse.Namespace) -> int:
    """Run ``benchmarks/overhead.py`` with the remaining arguments."""
    path = overhead_script()
    if path is None:
        print(
            "bench overhead runs benchmarks/overhead.py from a source checkout: "
            "run it from the repository root (git clone, then hindsight-lg bench "
            "overhead).",
            file=sys.stderr,
        )
        return 2
    spec = importlib.util.spec_from_file_location("hindsight_overhead", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    saved = sys.argv
    sys.argv = [str(path), *[a for a in args.rest if a != "--"]]
    try:
        module.main()
    finally:
        sys.argv = saved
    return 0
