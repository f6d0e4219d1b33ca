"""The public surface: sorted ``__all__`` lists that name real objects."""

from __future__ import annotations

import importlib

import pytest

MODULES = [
    "hindsight_lg",
    "hindsight_lg.errors",
    "hindsight_lg.memory",
    "hindsight_lg.memory.language",
    "hindsight_lg.backends.milvus",
    "hindsight_lg.store",
    "hindsight_lg.embeddings",
    "hindsight_lg.testing",
    "hindsight_lg.nodes",
    "hindsight_lg.checkpointers",
    "hindsight_lg.backends",
    "hindsight_lg.identity",
    "hindsight_lg.chat",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_unique_and_importable(name: str) -> None:
    """Every public module re-exports a sorted, duplicate-free ``__all__``."""
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert sorted(set(exported)) == exported
    assert [n for n in exported if not hasattr(module, n)] == []


def test_version_matches_the_distribution() -> None:
    """``hindsight_lg.__version__`` is the installed distribution's version."""
    from importlib.metadata import version

    import hindsight_lg

    assert version("hindsight-lg") == hindsight_lg.__version__


def test_errors_form_one_tree() -> None:
    """Every error hindsight-lg raises on purpose is a HindsightError."""
    from hindsight_lg import errors

    classes = [getattr(errors, n) for n in errors.__all__]
    assert all(issubclass(c, errors.HindsightError) for c in classes)
    assert issubclass(errors.StoreLocked, errors.StoreUnavailable)
    assert issubclass(errors.EmbeddingMismatch, errors.EmbeddingError)
