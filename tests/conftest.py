"""Shared fixtures: backends (in-memory and Milvus Lite), embedders, a frozen clock.

Creating the four Milvus Lite collections costs a few seconds, so one Milvus
Lite file and one backend per embedder are shared by the whole session; each
test gets a fresh namespace instead, which the contract guarantees isolates it.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
import structlog
from hypothesis import settings

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import MemoryBackend
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.embeddings import FlagEmbeddingEmbedder, minilm_embedder
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

BACKENDS = ["memory", "milvus-lite"]

# Two cores shared with other jobs: no per-example deadline, fewer examples.
settings.register_profile("hindsight", deadline=None, max_examples=40)
settings.load_profile("hindsight")


class _MilvusPool:
    """Lazily opened Milvus Lite backends on one session file, one per prefix."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._open: dict[str, MilvusBackend] = {}

    def get(self, prefix: str, *, dim: int, model_id: str) -> MilvusBackend:
        if prefix not in self._open:
            # One file per prefix: a fresh Lite server per model keeps a slow
            # model load from stalling the other backend's gRPC channel.
            uri = self.uri.replace(".db", f"-{prefix}.db")
            backend = MilvusBackend(uri, prefix=prefix)
            backend.setup(dim=dim, model_id=model_id)
            self._open[prefix] = backend
        return self._open[prefix]

    def close(self) -> None:
        for backend in self._open.values():
            backend.close()


@pytest.fixture(autouse=True)
def _reset_structlog() -> Iterator[None]:
    """Undo structlog configuration a test made through the CLI, as apps do.

    A leaked configuration prints to a capture stream pytest has since closed,
    which turns every later log call into an error.
    """
    yield
    structlog.reset_defaults()


# Recall gives up after the policy's 0.2 s by default and the turn goes on
# without memories. On a loaded 2-core CI machine a recall can take longer,
# so tests that are not about deadlines (those pass their own ``timeout=``)
# get a patient default instead of failing at random.
PATIENT_RECALL_S = 30.0


@pytest.fixture(autouse=True)
def _patient_recall(monkeypatch: pytest.MonkeyPatch) -> None:
    """Engines built with the default policy wait up to PATIENT_RECALL_S per recall."""
    from hindsight_lg.memory import _wiring
    from hindsight_lg.memory.policy import Policy

    class PatientPolicy(Policy):
        __slots__ = ()

        def __init__(self, **kwargs: object) -> None:
            kwargs.setdefault("recall_timeout_s", PATIENT_RECALL_S)
            super().__init__(**kwargs)  # type: ignore[arg-type]

    # _wiring builds the engine's parts: the one place a default policy is made.
    monkeypatch.setattr(_wiring, "Policy", PatientPolicy)


@pytest.fixture(scope="session")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Path of the session's Milvus Lite file."""
    return str(tmp_path_factory.mktemp("milvus") / "hindsight.db")


@pytest.fixture(scope="session")
def milvus_pool(milvus_uri: str) -> Iterator[_MilvusPool]:
    """Milvus Lite backends shared by the session (one per embedder)."""
    pool = _MilvusPool(milvus_uri)
    yield pool
    pool.close()


@pytest.fixture
def hashing() -> HashingEmbedder:
    """The deterministic hashing embedder (384 dimensions, like MiniLM)."""
    return HashingEmbedder()


@pytest.fixture(scope="session")
def minilm() -> FlagEmbeddingEmbedder:
    """The packaged all-MiniLM-L6-v2, loaded once per session (it takes seconds)."""
    return minilm_embedder()


@pytest.fixture
def clock() -> FrozenClock:
    """A clock frozen at 2023-11-14T22:13:20Z that tests move by hand."""
    return FrozenClock()


@pytest.fixture
def namespace() -> str:
    """A namespace no other test uses."""
    return f"ns-{uuid.uuid4().hex[:12]}"


def make_backend(
    kind: str, pool: _MilvusPool, *, dim: int, model_id: str, prefix: str
) -> MemoryBackend:
    """A backend of ``kind`` set up for the given embedding model."""
    if kind == "memory":
        backend = InMemoryBackend()
        backend.setup(dim=dim, model_id=model_id)
        return backend
    return pool.get(prefix, dim=dim, model_id=model_id)


@pytest.fixture(params=BACKENDS)
def backend(
    request: pytest.FixtureRequest, milvus_pool: _MilvusPool, hashing: HashingEmbedder
) -> MemoryBackend:
    """Each backend in turn, set up for the hashing embedder."""
    return make_backend(
        request.param,
        milvus_pool,
        dim=hashing.dim,
        model_id=hashing.model_id,
        prefix="hashing",
    )


@pytest.fixture
def memory(
    backend: MemoryBackend, hashing: HashingEmbedder, clock: FrozenClock
) -> Iterator[HindsightMemory]:
    """The engine on each backend with the hashing embedder and the frozen clock."""
    with HindsightMemory(backend, hashing, clock=clock) as engine:
        yield engine


@pytest.fixture
def minilm_memory(
    milvus_pool: _MilvusPool, minilm: FlagEmbeddingEmbedder, clock: FrozenClock
) -> Iterator[HindsightMemory]:
    """The engine on Milvus Lite with real MiniLM embeddings."""
    backend = milvus_pool.get("minilm", dim=minilm.dim, model_id=minilm.model_id)
    with HindsightMemory(backend, minilm, clock=clock) as engine:
        yield engine


@pytest.fixture
def usual_umask() -> Iterator[None]:
    """The umask most systems give a process: 0644 files unless the code says so."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)
