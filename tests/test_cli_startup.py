"""Commands that embed nothing start without loading the embedding model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# Run in a child process: Milvus Lite holds its file for the process's life,
# and the child must start with neither torch nor FlagEmbedding imported.
_SCRIPT = """
import contextlib, io, json, sys
import numpy as np
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.cli import main
from hindsight_lg.embeddings import MINILM_ID
from hindsight_lg.model import MemoryRecord

uri, out, *flag = sys.argv[1:]
backend = MilvusBackend(uri)  # a store of MiniLM vectors, written without the model
backend.setup(dim=384, model_id=MINILM_ID)
vector = np.random.default_rng(1).normal(size=384)
record = MemoryRecord(
    namespace="u", content="Maya prefers green tea", dense=vector.tolist()
)
backend.upsert("u", [record])
backend.close()
store = ["--uri", uri, *flag]  # --embedder minilm, or none: the store's own
commands = {
    "list": ["list", "-n", "u", *store],
    "stats": ["stats", "-n", "u", *store],
    "audit": ["audit", "-n", "u", record.id, *store],
    "export": ["export", "-n", "u", "-o", out, *store],
    "decay": ["decay", *store],
    "namespaces": ["namespaces", *store],
    "forget": ["forget", "-n", "u", "--yes", *store],
}
codes = {}
for name, argv in commands.items():
    with contextlib.redirect_stdout(io.StringIO()):
        codes[name] = main(argv)
print(json.dumps({
    "codes": codes,
    "torch": "torch" in sys.modules,
    "FlagEmbedding": "FlagEmbedding" in sys.modules,
}))
"""


@pytest.mark.parametrize(
    "flag", [["--embedder", "minilm"], []], ids=["named", "adopted"]
)
def test_commands_that_do_not_embed_never_import_the_model(
    tmp_path: Path, flag: list[str]
) -> None:
    """list, stats, audit, export, decay, namespaces and forget never import torch.

    Named with --embedder or adopted from the store (a MiniLM one), alike.
    """
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", _SCRIPT, str(tmp_path / "m.db"), str(tmp_path / "o")]
    done = subprocess.run(
        [*argv, *flag],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {
        "codes": dict.fromkeys(
            ("list", "stats", "audit", "export", "decay", "namespaces", "forget"), 0
        ),
        "torch": False,
        "FlagEmbedding": False,
    }
