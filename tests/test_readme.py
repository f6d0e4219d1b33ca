"""The README's Python examples run as written (with a temporary database path)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

from hindsight_lg.embeddings import FlagEmbeddingEmbedder

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCKS = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_examples() -> None:
    """The README shows at least one Python example to check."""
    assert len(BLOCKS) >= 1


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_readme_example_runs(
    index: int, tmp_path: Path, minilm: FlagEmbeddingEmbedder
) -> None:
    """Each README example runs on a temporary Milvus Lite file and prints memories.

    ``minilm`` is requested so the default embedder's model is already imported.
    """
    code = BLOCKS[index].replace("./hindsight.db", str(tmp_path / "readme.db"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, f"README.md[{index}]", "exec"), {"__name__": "readme"})
    assert "<memories>" in out.getvalue()
