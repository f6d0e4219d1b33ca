"""The two-tenant hostile-input property on a Milvus server.

The same script as ``tests/memory/test_hostile_tenant.py``: tenant A sends
hostile turns, tenant B ordinary ones, through one engine with a spool. On a
server the store itself refuses what does not fit its fields, so this checks
that such a refusal stays A's and never stops B's captures, recalls or
forgetting. Each example gets fresh namespaces on the session's collection.
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.model import entity_id
from hindsight_lg.testing import HashingEmbedder
from tests.memory.test_hostile_tenant import HOSTILE, play_hostile_script, scripts


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(script=scripts(), query=st.lists(HOSTILE, min_size=1, max_size=3))
def test_a_hostile_tenant_never_costs_another_tenant_a_memory_on_a_server(
    milvus_server_uri: str,
    script: list[tuple[str, str, Any, dict[str, Any]]],
    query: list[str],
) -> None:
    """B's turns are captured and recallable on the server; A's written or refused."""
    embedder = HashingEmbedder(dim=1024)
    backend = MilvusBackend(milvus_server_uri, prefix="hostile")
    backend.setup(dim=embedder.dim, model_id=embedder.model_id)
    tag = uuid.uuid4().hex[:8]
    try:
        play_hostile_script(backend, script, query, {"A": f"a{tag}", "B": f"b{tag}"})
    finally:
        backend.close()


def test_a_long_capitalised_token_is_captured_with_edges_on_a_server(
    server_backend: MilvusBackend,
) -> None:
    """The token that once made the server refuse every write lands whole."""
    namespace = f"tok{uuid.uuid4().hex[:8]}"
    token = "Q" + "x" * 300
    with HindsightMemory(server_backend, HashingEmbedder(), cache=False) as memory:
        written = memory.capture(f"My key is {token} for Berlin.", namespace=namespace)
        other = memory.capture("I live in Porto.", namespace=f"{namespace}b")
        edges = server_backend.edges(namespace, [written[0].id])
    assert written and other
    assert any(e.dst == entity_id(token) for e in edges)
    assert any(a.op == "create" for a in server_backend.audit(namespace))


# Every size limit of every write path (remember, update, correct, capture's
# fields), on the server's fields: the ``memory`` fixture uses the server backend.
from tests.memory.test_limits import *  # noqa: E402, F403
