"""Tenant isolation as a property: no path returns what its reader may not see.

Captures land in random namespaces (hostile names included), by random agents,
in random scopes. Every text carries a unique marker, so a leak is caught even
when it hides inside another record (a merged detail, a summary, a prompt).
"""

from __future__ import annotations

import io
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.memory.jobs.portability import export_namespace
from hindsight_lg.model import MemoryRecord, Scope
from hindsight_lg.testing import HashingEmbedder

NAMESPACES = ("alice", 'bob" or 1==1 or namespace == "', "carol\\")
AGENTS = ("", "planner", "coder")
READERS = (None, "planner", "coder", "stranger")
NAMES = ("Alice", "Bob", "Paris", "Kyoto")
THINGS = ("green tea", "black coffee", "jazz", "hiking")
MARK = re.compile(r"mk[0-9a-f]{10}")

CAPTURES = st.lists(
    st.tuples(
        st.sampled_from(NAMESPACES),
        st.sampled_from(AGENTS),
        st.sampled_from(list(Scope)),
        st.sampled_from(NAMES),
        st.sampled_from(THINGS),
        st.booleans(),
    ),
    min_size=1,
    max_size=7,
)


@dataclass(frozen=True)
class Written:
    namespace: str
    agent: str
    scope: Scope
    marker: str


def _may_see(w: Written, namespace: str, reader: str | None) -> bool:
    if w.namespace != namespace:
        return False
    return reader is None or w.scope is not Scope.PRIVATE or w.agent in ("", reader)


def _text_of(r: MemoryRecord) -> str:
    return " ".join([r.content, r.summary, repr(r.meta)])


def _leaks(text: str, allowed: set[str]) -> set[str]:
    return set(MARK.findall(text)) - allowed


def _capture_all(
    memory: HindsightMemory, plan: list[tuple[str, str, Scope, str, str, bool]]
) -> tuple[list[Written], str]:
    run = uuid.uuid4().hex[:6]
    written = []
    for ns, agent, scope, name, thing, negate in plan:
        marker = "mk" + uuid.uuid4().hex[:10]
        verb = "does not like" if negate else "prefers"
        text = f"{name} {verb} {thing} {marker}"
        memory.capture(text, namespace=ns + run, agent_id=agent or None, scope=scope)
        written.append(Written(ns + run, agent, scope, marker))
    return written, run


def _check_reader(
    memory: HindsightMemory, written: list[Written], ns: str, reader: str | None
) -> None:
    allowed = {w.marker for w in written if _may_see(w, ns, reader)}
    texts: list[str] = []
    for query in ("what does Alice prefer?", "green tea jazz", "Kyoto hiking Bob"):
        result = memory.recall(
            query, namespace=ns, agent_id=reader, explain=True, timeout=None, k=20
        )
        texts += [_text_of(r) for r in result.records] + [result.to_prompt()]
        hidden = set(result.cut) | set(result.explanation or {})
        texts += [_text_of(r) for r in memory.backend.get(ns, sorted(hidden))]
        probe = [float(x) for x in memory.embedder.embed([query])[0]]
        where = Where(reader=reader, statuses=())
        hits = memory.backend.search_dense(ns, probe, where, limit=50)
        hits += memory.backend.search_lexical(ns, query.split(), where, limit=50)
        texts += [_text_of(h.record) for h in hits]
    listed = memory.list_memories(ns, history=True, agent_id=reader)
    texts += [_text_of(r) for r in listed]
    buffer = io.StringIO()
    export_namespace(memory, ns, buffer, agent_id=reader)
    texts.append(buffer.getvalue())
    leaked = _leaks(" ".join(texts), allowed)
    assert leaked == set(), f"reader {reader!r} of {ns!r} saw {leaked}"
    assert all(r.namespace == ns for r in listed)


def _check_everything(memory: HindsightMemory, plan: list) -> None:  # type: ignore[type-arg]
    written, run = _capture_all(memory, plan)
    for ns in NAMESPACES:
        for reader in READERS:
            _check_reader(memory, written, ns + run, reader)


@pytest.fixture(scope="module")
def lite_backend(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusBackend]:
    backend = MilvusBackend(str(tmp_path_factory.mktemp("iso") / "iso.db"))
    yield backend
    backend.close()


def _memory(backend: MemoryBackend) -> HindsightMemory:
    return HindsightMemory(backend, HashingEmbedder())


@settings(max_examples=25, deadline=None)
@given(plan=CAPTURES)
def test_no_leak_in_memory_backend(plan: list) -> None:  # type: ignore[type-arg]
    """In-memory backend: recall, explain, search, list and export stay in bounds."""
    memory = _memory(InMemoryBackend())
    _check_everything(memory, plan)
    memory.close()


@settings(
    max_examples=4,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(plan=CAPTURES)
def test_no_leak_on_milvus_lite(lite_backend: MilvusBackend, plan: list) -> None:  # type: ignore[type-arg]
    """Milvus Lite: the same property, through real filter expressions."""
    memory = _memory(lite_backend)
    _check_everything(memory, plan)
