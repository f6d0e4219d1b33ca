"""Optional backend features are typed protocols, checked with ``isinstance``.

Which shipped backend has which feature, what a backend without one gets, and
a scan of the package that fails if a feature is looked up by name again
(``hasattr``/``getattr`` with its method name or a string constant).
"""

from __future__ import annotations

import ast
import inspect
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg.backends import (
    CachedBackend,
    ForwardingBackend,
    InMemoryBackend,
    Where,
    optional,
)
from hindsight_lg.backends.base import Hit
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.backends.optional import (
    CombinedWrites,
    DenseIds,
    HoldsCold,
    LiteStore,
    LiveCheck,
    LocalDense,
    Refresh,
    StoredModel,
    WriteStamps,
)
from hindsight_lg.testing.backend_contract import EMBEDDER, rec

PACKAGE = Path(__file__).resolve().parents[2] / "hindsight_lg"
PROTOCOLS = [
    LocalDense,
    LiveCheck,
    Refresh,
    HoldsCold,
    WriteStamps,
    DenseIds,
    CombinedWrites,
    StoredModel,
    LiteStore,
]
# The read cache's and the store's features a wrapper passes on.
PASSED_ON = {LocalDense, LiveCheck, Refresh, HoldsCold, WriteStamps}
PASSED_ON |= {CombinedWrites, StoredModel}


def members(protocol: type) -> list[str]:
    """The methods and attributes a protocol declares."""
    return sorted(
        n
        for n in [*vars(protocol), *vars(protocol).get("__annotations__", {})]
        if not n.startswith("_")
    )


FEATURES = {name for p in PROTOCOLS for name in members(p)}


class _Bare(InMemoryBackend):
    """The in-memory backend without the one feature it has."""

    stored_model = None  # type: ignore[assignment]


def _has(backend: object) -> set[type]:
    return {p for p in PROTOCOLS if isinstance(backend, p)}


def test_every_protocol_declares_one_member() -> None:
    """Each feature is one method (or one attribute), so a backend has it or not."""
    assert [1] * len(PROTOCOLS) == [len(members(p)) for p in PROTOCOLS]
    assert set(PROTOCOLS) == {
        getattr(optional, n)
        for n in optional.__all__
        if isinstance(getattr(optional, n), type)
    }


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (InMemoryBackend, {StoredModel}),
        (_Bare, set()),
        (lambda: ForwardingBackend(InMemoryBackend()), PASSED_ON),
        (lambda: CachedBackend(InMemoryBackend()), PASSED_ON),
        (
            lambda: MilvusBackend("./never-opened.db"),
            {WriteStamps, DenseIds, CombinedWrites, StoredModel, LiteStore},
        ),
    ],
    ids=["memory", "bare", "forwarding", "cached", "milvus"],
)
def test_each_shipped_backend_has_its_features(make: Any, expected: set[type]) -> None:
    """``isinstance`` finds exactly the features each backend implements."""
    assert sorted(p.__name__ for p in expected) == sorted(
        p.__name__ for p in _has(make())
    )


@pytest.mark.parametrize(
    ("cls", "protocol"),
    [
        (CachedBackend, LocalDense),
        (CachedBackend, LiveCheck),
        (CachedBackend, Refresh),
        (CachedBackend, HoldsCold),
        (ForwardingBackend, LocalDense),
        (ForwardingBackend, LiveCheck),
        (ForwardingBackend, Refresh),
        (ForwardingBackend, HoldsCold),
        (ForwardingBackend, WriteStamps),
        (ForwardingBackend, CombinedWrites),
        (ForwardingBackend, StoredModel),
        (MilvusBackend, WriteStamps),
        (MilvusBackend, DenseIds),
        (MilvusBackend, CombinedWrites),
        (MilvusBackend, StoredModel),
        (InMemoryBackend, StoredModel),
    ],
)
def test_implementations_take_the_protocols_arguments(
    cls: type, protocol: type
) -> None:
    """An implementation's parameters (names, kinds, defaults) are the protocol's."""
    [name] = members(protocol)

    def shape(fn: Any) -> list[tuple[str, Any, Any]]:
        params = list(inspect.signature(fn).parameters.values())[1:]  # self
        return [(p.name, p.kind, p.default) for p in params]

    assert shape(getattr(protocol, name)) == shape(getattr(cls, name))


def test_a_wrapper_over_a_backend_without_features_answers_the_defaults() -> None:
    """Live ids, cold maybe, no stamps, no model, one write at a time, no refresh."""
    inner = _Bare()
    inner.setup(dim=EMBEDDER.dim, model_id=EMBEDDER.model_id)
    r = rec("u", "green tea")
    inner.upsert("u", [r])
    view = ForwardingBackend(inner)
    view.refresh("u")
    assert (["a", "b"], True, None, None, False) == (
        view.live("u", ["a", "b"]),
        view.holds_cold("u"),
        view.write_stamps("u"),
        view.stored_model(),
        view.combined_writes(),
    )
    [hit] = view.search_dense_local("u", r.dense, Where(), limit=1)
    assert r.id == hit.record.id


def test_the_functions_answer_the_defaults_for_a_backend_without_features() -> None:
    """No model adopted, writes not combined, not a Lite file, dense search asked."""
    inner = _Bare()
    assert (None, False, False) == (
        optional.stored_model(inner),
        optional.combines_writes(inner),
        optional.is_lite(inner),
    )


class _Counted(InMemoryBackend):
    """Notes which dense search a caller took, and whether it passed ``vectors``."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, bool]] = []

    def search_dense(self, *args: Any, **kwargs: Any) -> list[Hit]:
        self.calls.append(("search_dense", "vectors" in kwargs))
        return super().search_dense(*args, **kwargs)


class _CountedLocal(_Counted):
    def search_dense_local(
        self,
        namespace: str,
        vector: Sequence[float],
        where: Where,
        *,
        limit: int,
        vectors: bool = False,
    ) -> list[Hit]:
        self.calls.append(("search_dense_local", vectors))
        return []


@pytest.mark.parametrize(
    ("make", "expected"),
    [(_Counted, "search_dense"), (_CountedLocal, "search_dense_local")],
)
def test_local_dense_search_takes_the_cache_s_scan_where_there_is_one(
    make: type[_Counted], expected: str
) -> None:
    """A backend with ``LocalDense`` is searched through it; vectors only when asked."""
    backend = make()
    backend.setup(dim=4, model_id="m")
    for vectors in (False, True):
        optional.local_dense_search(
            backend, "u", [1.0, 0, 0, 0], Where(), limit=1, vectors=vectors
        )
    assert [(expected, False), (expected, True)] == backend.calls


# -- no feature looked up by name ---------------------------------------------

PROBES = ("hasattr", "getattr")


def by_name(source: str) -> list[str]:
    """Where ``source`` looks a backend feature up by name, as readable lines.

    A ``hasattr``/``getattr`` whose attribute is a feature's name or an
    upper-case constant (``getattr(backend, LIVE, None)``), a module-level
    string constant holding a feature's name, and a ``type: ignore`` on a
    line that calls a feature.
    """
    found = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in PROBES
            and len(node.args) >= 2
        ):
            what = node.args[1]
            named = isinstance(what, ast.Constant) and what.value in FEATURES
            constant = isinstance(what, ast.Name) and what.id.isupper()
            if named or constant:
                found.append(f"{node.lineno}: {ast.unparse(node)}")
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and node.value.value in FEATURES
        ):
            found.append(f"{node.lineno}: {ast.unparse(node)}")
    called = "|".join(sorted(FEATURES))
    calls = re.compile(rf"\.({called})\(.*# type: ignore")
    for number, line in enumerate(source.splitlines(), 1):
        if calls.search(line):
            found.append(f"{number}: {line.strip()}")
    return found


def test_no_backend_feature_is_looked_up_by_name() -> None:
    """The package asks ``isinstance(backend, Feature)``, never ``hasattr``."""
    assert [] == [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in by_name(path.read_text())
    ]


def test_the_scan_catches_the_old_probes_and_nothing_else() -> None:
    """The string-named probes of before are found; ``hasattr(raw, "content")`` is not."""
    old = """
LIVE = "live"
if hasattr(self.backend, LIVE):
    held = self.backend.live(ns, ids)  # type: ignore[attr-defined]
find = getattr(self.inner, "search_dense_ids", None)
if hasattr(raw, "content") and not isinstance(raw, dict):
    close = getattr(part, "close", None)
"""
    assert [
        "2: LIVE = 'live'",
        "3: hasattr(self.backend, LIVE)",
        "4: held = self.backend.live(ns, ids)  # type: ignore[attr-defined]",
        "5: getattr(self.inner, 'search_dense_ids', None)",
    ] == sorted(by_name(old))


def test_a_user_s_backend_has_a_feature_by_defining_its_method() -> None:
    """A backend of one's own with ``holds_cold`` is a ``HoldsCold``: no base class."""

    class Mine(InMemoryBackend):
        def holds_cold(self, namespace: str) -> bool:
            return False

    assert (True, False) == (
        isinstance(Mine(), HoldsCold),
        isinstance(InMemoryBackend(), HoldsCold),
    )
