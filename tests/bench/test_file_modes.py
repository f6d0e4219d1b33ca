"""What the benchmarks write (vector cache, scores, plots) is its owner's alone."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from hindsight_lg.bench._cache import CachedEmbedder
from hindsight_lg.bench.report import plot_lines
from hindsight_lg.embeddings import HashingEmbedder

# Files would be 0644 under the usual umask unless the code says otherwise.
pytestmark = pytest.mark.usefixtures("usual_umask")


def modes(root: Path) -> dict[str, str]:
    """Each path under ``root`` (relative) and its permission bits in octal."""
    return {
        str(p.relative_to(root)): oct(stat.S_IMODE(os.lstat(p).st_mode))
        for p in sorted(root.rglob("*"))
    }


def test_the_vector_cache_is_0600_in_0700_folders(tmp_path: Path) -> None:
    """The cache folder it creates is 0700 and the cache file 0600, with no temporary left."""
    cache = CachedEmbedder(HashingEmbedder(dim=8), tmp_path / "cache" / "vectors")
    cache.embed(["green tea", "black coffee"])
    cache.save()
    name = f"cache/vectors/{cache.path.name if cache.path else ''}"
    assert modes(tmp_path) == {
        "cache": "0o700",
        "cache/vectors": "0o700",
        name: "0o600",
    }


def test_a_plot_is_written_0600(tmp_path: Path) -> None:
    """A benchmark plot lands as a 0600 file."""
    plot_lines(
        {"p95": [(1, 2.0), (10, 3.0)]},
        tmp_path / "latency.png",
        title="t",
        xlabel="x",
        ylabel="y",
    )
    assert modes(tmp_path) == {"latency.png": "0o600"}
