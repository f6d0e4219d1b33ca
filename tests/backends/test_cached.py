"""The write-through read cache answers exactly like the backend behind it."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hindsight_lg import Edge, EdgeType, MemoryRecord
from hindsight_lg._text import terms
from hindsight_lg.backends.base import Where
from hindsight_lg.backends.cached import CachedBackend, with_read_cache
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.backends.milvus import MilvusBackend
from hindsight_lg.testing import HashingEmbedder

WORDS = ["tea", "coffee", "Berlin", "hiking", "Redis", "上海", "天气", "wedding"]
EMB = HashingEmbedder(dim=32)

_record = st.builds(
    lambda words, kind, status, t, agent, scope: MemoryRecord(
        namespace="u",
        content=" ".join(words),
        kind=kind,
        status=status,
        event_time=1e9 + t,
        agent_id=agent,
        scope=scope,
        dense=EMB.embed([" ".join(words)])[0].tolist(),
    ),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
    st.sampled_from(["fact", "preference", "query"]),
    st.sampled_from(["active", "cold", "superseded"]),
    st.floats(0, 1e6),
    st.sampled_from(["", "a", "b"]),
    st.sampled_from(["private", "team"]),
)
_where = st.builds(
    Where,
    statuses=st.sampled_from([(), ("active",), ("active", "cold")]),
    reader=st.sampled_from([None, "a", "b"]),
    since=st.sampled_from([None, 1e9 + 5e5]),
)


def _pair() -> tuple[CachedBackend, InMemoryBackend]:
    reference = InMemoryBackend()
    return CachedBackend(InMemoryBackend()), reference


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_record, min_size=1, max_size=12),
    st.lists(st.integers(0, 11), max_size=4),
    _where,
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
)
def test_cache_matches_reference_after_writes(
    records: list[MemoryRecord], deleted: list[int], where: Where, query: list[str]
) -> None:
    """Queries, lexical search, edges and counts agree with the uncached reference."""
    cached, reference = _pair()
    cached.query("u", Where(statuses=()))  # load the namespace before the writes
    for backend in (cached, reference):
        backend.upsert("u", records)
        backend.add_edges(
            "u",
            [
                Edge("u", a.id, b.id, EdgeType.PRECEDES)
                for a, b in zip(records, records[1:], strict=False)
            ],
        )
        doomed = [records[i].id for i in deleted if i < len(records)]
        backend.delete("u", doomed)
        backend.delete_edges("u", doomed)
    ids = [r.id for r in records]
    q = terms(" ".join(query))
    assert [r.id for r in cached.query("u", where)] == [
        r.id for r in reference.query("u", where)
    ]
    assert {
        h.record.id: round(h.score, 6)
        for h in cached.search_lexical("u", q, where, limit=50)
    } == {
        h.record.id: round(h.score, 6)
        for h in reference.search_lexical("u", q, where, limit=50)
    }
    assert {e.key for e in cached.edges("u", ids)} == {
        e.key for e in reference.edges("u", ids)
    }
    assert cached.count("u", where) == reference.count("u", where)


def test_engines_sharing_a_milvus_backend_share_one_cache(tmp_path: object) -> None:
    """Two wrappers of one Milvus backend are the same cache, so writes are seen."""
    backend = MilvusBackend(str(tmp_path) + "/m.db")  # type: ignore[operator]
    backend.setup(dim=EMB.dim, model_id=EMB.model_id)
    first, second = with_read_cache(backend), with_read_cache(backend)
    assert first is second
    assert second.query("u", Where()) == []
    record = MemoryRecord(
        namespace="u",
        content="tea in Berlin",
        dense=EMB.embed(["tea in Berlin"])[0].tolist(),
    )
    first.upsert("u", [record])
    assert [r.id for r in second.query("u", Where())] == [record.id]
    assert [
        h.record.id
        for h in second.search_lexical("u", terms("Berlin"), Where(), limit=5)
    ] == [record.id]
    backend.close()
