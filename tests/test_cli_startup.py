"""Commands that embed nothing start without loading the embedding model.

Nor do they load the capture pipeline (the language tables of both languages,
the writer and its judge), LangChain or LangGraph: what a command imports is
read from ``sys.modules`` in a child process, so a regression shows without
timing anything (``benchmarks/startup_floor.py`` times the starts). Commands
that embed a query (``recall``, ``explain``) load the packaged model without
torch, FlagEmbedding or transformers: MiniLM runs in numpy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Run in a child process: Milvus Lite holds its file for the process's life,
# and the child must start with neither torch nor FlagEmbedding imported.
_SCRIPT = """
import contextlib, io, json, sys
import numpy as np
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.cli import main
from hindsight_lg.embeddings import MINILM_ID
from hindsight_lg.model import MemoryRecord, Status

uri, out, heavy, *flag = sys.argv[1:]
backend = MilvusBackend(uri)  # a store of MiniLM vectors, written without the model
backend.setup(dim=384, model_id=MINILM_ID)
vector = np.random.default_rng(1).normal(size=384)
record = MemoryRecord(
    namespace="u", content="Maya prefers green tea", dense=vector.tolist()
)
archived = MemoryRecord(
    namespace="u",
    content="My sister Mei moved to Chengdu",
    dense=vector.tolist(),
    status=Status.ARCHIVED,
)
backend.upsert("u", [record, archived])
backend.close()
store = ["--uri", uri, *flag]  # --embedder minilm, or none: the store's own
commands = {
    "list": ["list", "-n", "u", *store],
    "stats": ["stats", "-n", "u", *store],
    "audit": ["audit", "-n", "u", record.id, *store],
    "restore": ["restore", "-n", "u", archived.id, *store],
    "export": ["export", "-n", "u", "-o", out, *store],
    "decay": ["decay", *store],
    "namespaces": ["namespaces", *store],
    "forget": ["forget", "-n", "u", "--yes", *store],
}
codes, loaded = {}, {}
for name, argv in commands.items():
    with contextlib.redirect_stdout(io.StringIO()):
        codes[name] = main(argv)
    # What this command (or one before it) loaded that none of them needs.
    loaded[name] = sorted(
        m for m in sys.modules if any(m == h or m.startswith(h + ".") for h in heavy.split(","))
    )
print(json.dumps({
    "codes": codes,
    "loaded": loaded,
    "torch": "torch" in sys.modules,
    "FlagEmbedding": "FlagEmbedding" in sys.modules,
}))
"""

# Modules a start that captures nothing and embeds nothing never needs: the
# capture pipeline (its language tables take a good part of a second to
# compile), the frameworks of the adapter layer, the model's stack and the
# tracing SDK (the CLI sets one up only when an exporter is configured).
CAPTURE_PIPELINE = (
    "hindsight_lg.memory.capture.writer",
    "hindsight_lg.memory.capture.conflicts",
    "hindsight_lg.memory.capture.llm_judge",
    "hindsight_lg.memory.language.encode",
    "hindsight_lg.memory.language.slots",
    "hindsight_lg.memory.language.judge",
    "hindsight_lg.memory.language.cues",
    "hindsight_lg.memory.language.frames",
    "hindsight_lg.memory.language.lexicon",
    "hindsight_lg.memory.language.extract",
)
FRAMEWORKS = (
    "langgraph",
    "langchain",
    "langchain_core",
    "torch",
    "FlagEmbedding",
    "transformers",
    "opentelemetry.sdk",
)


def _report(argv: list[str]) -> Any:
    """Run ``argv`` offline on one thread; the JSON its last line prints."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        argv, capture_output=True, text=True, env=env, timeout=600, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "flag", [["--embedder", "minilm"], []], ids=["named", "adopted"]
)
def test_commands_that_do_not_embed_never_import_the_model(
    tmp_path: Path, flag: list[str]
) -> None:
    """list, stats, audit, restore, export, decay, namespaces and forget load no model.

    Nor the capture pipeline, LangChain, LangGraph or the tracing SDK. Named
    with --embedder or adopted from the store (a MiniLM one), alike.
    """
    heavy = ",".join(CAPTURE_PIPELINE + FRAMEWORKS)
    argv = [
        sys.executable,
        "-c",
        _SCRIPT,
        str(tmp_path / "m.db"),
        str(tmp_path / "o"),
        heavy,
    ]
    report = _report([*argv, *flag])
    commands = (
        "list",
        "stats",
        "audit",
        "restore",
        "export",
        "decay",
        "namespaces",
        "forget",
    )
    assert report == {
        "codes": dict.fromkeys(commands, 0),
        "loaded": {name: [] for name in commands},
        "torch": False,
        "FlagEmbedding": False,
    }


_OPEN = """
import json, sys
import hindsight_lg

imported = sorted(sys.modules)
memory = hindsight_lg.HindsightMemory.from_uri(sys.argv[1], warm_up=False)
memory.list_memories("u")
memory.close()
print(json.dumps({"import": imported, "open": sorted(sys.modules)}))
"""


def test_importing_the_package_and_opening_a_store_load_no_pipeline(
    tmp_path: Path,
) -> None:
    """``import hindsight_lg`` reads no language table; an open that lists none either.

    The language readers, the writer and the frameworks load with the first
    capture or recall (or an adapter that needs them), not with the package.
    """
    report = _report([sys.executable, "-c", _OPEN, str(tmp_path / "m.db")])
    language = "hindsight_lg.memory.language"
    heavy = (language, *CAPTURE_PIPELINE, *FRAMEWORKS, "pymilvus")
    assert [m for m in report["import"] if _within(m, heavy)] == []
    # Opening a store needs pymilvus, and a new store the default embedder's
    # name, never its weights, the pipeline or the frameworks.
    heavy = (language, *CAPTURE_PIPELINE, *FRAMEWORKS)
    assert [m for m in report["open"] if _within(m, heavy)] == []
    assert "pymilvus" in report["open"]  # the open really reached the store


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


# A store of the packaged pair's vectors, then recall and explain on it: the
# commands that embed a query. What they imported is read as above.
_RECALL = """
import contextlib, io, json, sys
import numpy as np
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.cli import main
from hindsight_lg.embeddings import BILINGUAL_ID, embedder_from_name
from hindsight_lg.model import MemoryRecord

uri = sys.argv[1]
embedder = embedder_from_name(BILINGUAL_ID)
text = "Maya prefers green tea"
backend = MilvusBackend(uri)
backend.setup(dim=embedder.dim, model_id=embedder.model_id)
backend.upsert("u", [MemoryRecord(
    namespace="u", content=text, dense=embedder.embed([text])[0].tolist()
)])
backend.close()
codes, out = {}, {}
for name in ("recall", "explain"):
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        codes[name] = main([name, "what does Maya drink?", "-n", "u", "--uri", uri])
    out[name] = printed.getvalue()
print(json.dumps({
    "codes": codes,
    "found": {name: text in printed for name, printed in out.items()},
    "engine": embedder.english.engine,
    "loaded": sorted(m for m in ("torch", "FlagEmbedding", "transformers") if m in sys.modules),
}))
"""


def test_recall_on_the_packaged_model_loads_it_without_torch(tmp_path: Path) -> None:
    """recall and explain embed with MiniLM in numpy: torch, FlagEmbedding, transformers stay out."""
    from hindsight_lg.embeddings import bert, minilm_path

    path = minilm_path()
    assert path is not None, "the offline-model extra is part of the dev setup"
    # The premise: here the packaged MiniLM runs without FlagEmbedding.
    assert bert.unfit_reason(Path(path), "mean") is None
    report = _report([sys.executable, "-c", _RECALL, str(tmp_path / "m.db")])
    assert report == {
        "codes": {"recall": 0, "explain": 0},
        "found": {"recall": True, "explain": True},
        "engine": "numpy",
        "loaded": [],
    }


def test_the_startup_table_sets_recall_against_list() -> None:
    """The start-up report prints recall apart, with its ratio to list on the same store."""
    from hindsight_lg.bench.startup import Startup, startup_table

    startup = Startup(import_s=0.2, commands={"list": 0.8}, python_s=0.02, recall_s=1.6)
    assert startup.recall_over_list() == 2.0
    assert startup.ratios() == {
        "list": 4.0
    }  # recall is not a command that embeds nothing
    table = startup_table(startup)
    assert "| `python -c pass` | 0.02 | 0.10 |" in table
    assert (
        "| `recall` (loads the model; 2.00x `list`, mark 2x) | 1.60 | 8.00 |" in table
    )
    assert Startup(import_s=0.2, recall_s=1.6).recall_over_list() is None
