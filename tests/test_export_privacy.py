"""An export made for one agent names nothing private to another agent."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest

from hindsight_lg import HindsightMemory
from hindsight_lg.memory import export_namespace, import_namespace
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    yield engine
    engine.close()


def test_an_agents_export_holds_no_id_of_another_agents_private_memory(
    memory: HindsightMemory,
) -> None:
    """A shared memory that superseded agent A's private one is exported for B
    without A's memory id in any line (its audit entry included)."""
    memory.capture("I live in Paris.", namespace="u1", agent_id="agentA")
    memory.capture("I live in Rome now.", namespace="u1")
    hidden = [r.id for r in memory.list_memories("u1", history=True) if r.agent_id]
    assert len(hidden) == 1
    out = io.StringIO()
    export_namespace(memory, "u1", out, agent_id="agentB")
    assert hidden[0] not in out.getvalue()
    import_namespace(memory, out.getvalue().splitlines(), namespace="copy")
    (entry,) = memory.audit("copy")
    assert (entry.op, entry.detail["content"]) == ("supersede", "I live in Rome now.")
