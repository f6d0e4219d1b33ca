"""A real Milvus 2.3.5 standalone server (PyPI ``milvus``), one per session.

Every test under ``tests/server`` carries the ``server`` marker; select them
with ``pytest -m server`` or leave them out with ``-m "not server"``. The
``backend`` fixture is overridden here, so contract and acceptance tests
imported into this package run against the server unchanged.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.testing import HashingEmbedder

# Every Milvus component picks "the first unicastable address" unless told:
# keep the whole server on loopback.
_COMPONENTS = (
    "rootCoord",
    "proxy",
    "queryCoord",
    "queryNode",
    "indexNode",
    "dataCoord",
    "dataNode",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test of this package ``server``."""
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.server)


def start_server(base_dir: Path) -> object:
    """Start a Milvus standalone server in ``base_dir`` on free loopback ports."""
    try:
        from milvus import MilvusServer
    except ImportError:  # pragma: no cover - the dev extra installs it
        pytest.skip("pip install milvus  # Milvus 2.3.5 standalone server")
    server = MilvusServer()
    server.set_base_dir(str(base_dir))
    extra = server.config.extra_configs
    for component in _COMPONENTS:
        extra[f"{component}.ip"] = "127.0.0.1"
    # Strong reads wait for the next time tick: 200 ms by default.
    extra["proxy.timeTickInterval"] = 50
    try:
        server.start()
    except TimeoutError:
        # A first start on a cold machine can miss the package's 180 s wait
        # (etcd and MinIO initialise first): stop it, try once more afresh.
        server.stop()
        if base_dir.name.endswith("-retry"):
            raise
        retry = base_dir.with_name(base_dir.name + "-retry")
        retry.mkdir(exist_ok=True)
        return start_server(retry)
    return server


@pytest.fixture(scope="session")
def milvus_server_uri(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[str]:
    """URI of a Milvus server started for this session (stopped at its end).

    ``HINDSIGHT_MILVUS_URI`` names a server already running instead (one of
    your own, or one a long benchmark keeps up): nothing is started or stopped.
    """
    given = os.environ.get("HINDSIGHT_MILVUS_URI")
    if given:
        yield given
        return
    started = time.monotonic()
    server = start_server(tmp_path_factory.mktemp("milvus-server"))
    port = server.listen_port  # type: ignore[attr-defined]
    print(f"milvus server up in {time.monotonic() - started:.1f}s on port {port}")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.stop()  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def server_backend(milvus_server_uri: str) -> Iterator[MilvusBackend]:
    """A backend on the session's server, set up for the hashing embedder."""
    embedder = HashingEmbedder()
    backend = MilvusBackend(milvus_server_uri, prefix="hashing")
    backend.setup(dim=embedder.dim, model_id=embedder.model_id)
    yield backend
    backend.close()


@pytest.fixture
def backend(server_backend: MilvusBackend) -> MilvusBackend:
    """The server backend in place of the in-memory and Lite ones."""
    return server_backend
