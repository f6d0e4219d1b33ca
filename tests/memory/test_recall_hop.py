"""The second hop (recall/hop.py) and names used only to address someone."""

from __future__ import annotations

from typing import Any

import pytest

from hindsight_lg import HindsightMemory, MemoryRecord, Policy
from hindsight_lg.backends import ForwardingBackend
from hindsight_lg.backends.base import Capabilities, Hit
from hindsight_lg.backends.cached import CachedBackend
from hindsight_lg.backends.memory import InMemoryBackend
from hindsight_lg.memory.language.address import only_addressed
from hindsight_lg.memory.recall.hop import addressed, hop_vector
from hindsight_lg.memory.recall.result import Candidate
from hindsight_lg.model import TURN_KEY
from hindsight_lg.telemetry import RECALL_DENSE
from hindsight_lg.testing import FrozenClock, HashingEmbedder, capture_spans


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Glad you've got people to lean on, Melanie.", True),
        ("Wow, Melanie, what a beautiful moment!", True),
        ("Hey Melanie! Long time no see.", True),
        ("Melanie, that photo's amazing!", True),
        ("Thanks Melanie", True),
        ("I went hiking with Melanie.", False),
        ("Hey Melanie! I told Melanie's sister about it.", False),
        ("Melanie said the park was closed.", False),
        ("Nothing about her here.", False),
    ],
)
def test_a_name_is_addressed_only_when_every_mention_is_a_vocative(
    text: str, expected: bool
) -> None:
    assert only_addressed(text, ["Melanie"]) is expected


def test_the_entity_path_discounts_what_was_said_to_the_person() -> None:
    """Said to Melanie by someone else: discounted; said by her, or about her: kept."""
    told = MemoryRecord(
        namespace="u",
        content="Glad you've got people to lean on.",
        participants=["Caroline"],
        meta={TURN_KEY: "Glad you've got people to lean on, Melanie."},
    )
    said = MemoryRecord(
        namespace="u", content="Thanks, Melanie!", participants=["Melanie"]
    )
    about = MemoryRecord(
        namespace="u", content="I went hiking with Melanie.", participants=["Caroline"]
    )
    hits = [Hit(r, 1.0) for r in (told, said, about)]
    assert addressed(hits, ["Melanie"]) == {told.id}


def _store(memory: HindsightMemory, texts: dict[str, str]) -> dict[str, MemoryRecord]:
    embedder = memory.embedder
    records = {
        key: MemoryRecord(
            namespace="u",
            content=text,
            dense=[float(x) for x in embedder.embed([text])[0]],
        )
        for key, text in texts.items()
    }
    memory.backend.upsert("u", list(records.values()))
    return records


class _ServerLike(ForwardingBackend):
    """Answers as a Milvus server does: records without vectors unless asked."""

    def _forward(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        found = super()._forward(name, *args, **kwargs)
        if kwargs.get("vectors") or not isinstance(found, list):
            return found
        return [_bare(x) for x in found]


def _bare(x: Any) -> Any:
    if isinstance(x, Hit):
        return Hit(x.record.replace(dense=[]), x.score)
    return x.replace(dense=[]) if isinstance(x, MemoryRecord) else x


def _engine(
    clock: FrozenClock, server: bool = False, **policy: object
) -> HindsightMemory:
    inner = InMemoryBackend()
    return HindsightMemory(
        CachedBackend(_ServerLike(inner), ttl_s=10.0) if server else inner,
        HashingEmbedder(),
        clock=clock,
        policy=Policy(**policy),  # type: ignore[arg-type]
    )


def test_the_hop_reaches_a_memory_close_to_the_best_hit_not_to_the_question(
    clock: FrozenClock,
) -> None:
    """The bridge shares words with the answer's first half only: the hop finds it,
    the lender gets no hop credit, and without the hop the bridge has no hop path."""
    texts = {
        "hit": "Jon lost his banker job and opened a dance studio downtown",
        "bridge": "The dance studio downtown hosts a salsa night every Friday",
        "other": "Gina sells hoodies in her online clothing store",
    }
    paths: dict[bool, dict[str, dict[str, float]]] = {}
    for on in (True, False):
        memory = _engine(clock, hop_docs=2 if on else 0)
        records = _store(memory, texts)
        result = memory.recall(
            "What did Jon do after the banker job?",
            namespace="u",
            budget_tokens=2000,
            explain=True,
            timeout=None,
        )
        assert result.explanation is not None
        paths[on] = {
            key: result.explanation.get(records[key].id, {}) for key in records
        }
        memory.close()
    assert paths[True]["bridge"].get("hop", 0.0) > 0
    assert "hop" not in paths[True]["hit"]  # the lender: the hop starts from it
    assert "hop" not in paths[False]["bridge"]


def test_the_hop_runs_through_a_read_cache_that_holds_no_vectors(
    clock: FrozenClock,
) -> None:
    """A server's cache loads a recall-only tenant without vectors: the dense
    search's hits bring them, so the hop reaches the bridge as it does in memory."""
    memory = _engine(clock, server=True)
    records = _store(
        memory,
        {
            "hit": "Jon lost his banker job and opened a dance studio downtown",
            "bridge": "The dance studio downtown hosts a salsa night every Friday",
        },
    )
    with capture_spans() as spans:
        result = memory.recall(
            "What did Jon do after the banker job?",
            namespace="u",
            explain=True,
            timeout=None,
        )
    [cached] = memory.backend.get("u", [records["bridge"].id])
    assert [] == cached.dense  # the cache holds no vector to lend
    assert result.explanation is not None
    assert result.explanation[records["bridge"].id].get("hop", 0.0) > 0
    dense = [s for s in spans if s.name == RECALL_DENSE]
    # The question names Jon, but the cache holds the tenant and no cold memory,
    # so there is no "dense-cold" search (tests/memory/test_recall_people.py).
    assert ["dense", "hop"] == sorted(
        str((s.attributes or {}).get("hindsight.path")) for s in dense
    )
    memory.close()


def test_an_unrelated_question_still_recalls_nothing_with_the_hop(
    clock: FrozenClock,
) -> None:
    """No hit bears on the question, so nothing lends a vector and no block is made."""
    memory = _engine(clock)
    _store(
        memory,
        {
            "a": "Jon opened a dance studio downtown",
            "b": "The dance studio hosts a salsa night",
        },
    )
    result = memory.recall(
        "boiling point of mercury?", namespace="u", budget_tokens=500, timeout=None
    )
    assert result.to_prompt() == ""
    memory.close()


def test_the_hop_vector_is_the_unit_sum_and_skips_a_foreign_vector() -> None:
    same = Candidate(MemoryRecord(namespace="u", content="a", dense=[0.0, 1.0]))
    other = Candidate(MemoryRecord(namespace="u", content="b", dense=[1.0, 0.0, 0.0]))
    v = hop_vector([1.0, 0.0], [same, other])
    assert v == pytest.approx([2**-0.5, 2**-0.5])


def test_the_hop_runs_on_every_backend(memory: HindsightMemory, namespace: str) -> None:
    """In memory and on a Lite file behind its read cache (whose cached records
    hold no vectors), captured memories lend theirs and the hop reaches the bridge."""
    for text in (
        "Jon lost his banker job and opened a dance studio downtown",
        "The dance studio downtown hosts a salsa night every Friday",
    ):
        memory.capture(text, namespace=namespace)
    result = memory.recall(
        "What did Jon do after the banker job?",
        namespace=namespace,
        explain=True,
        timeout=None,
    )
    assert result.explanation is not None
    hopped = [
        memory_id for memory_id, paths in result.explanation.items() if "hop" in paths
    ]
    assert 1 == len(hopped)


class _BeforeVectors(InMemoryBackend):
    """A backend written before ``search_dense`` took ``vectors``."""

    def search_dense(  # type: ignore[override]
        self, namespace: str, vector: Any, where: Any, *, limit: int
    ) -> list[Hit]:
        return super().search_dense(namespace, vector, where, limit=limit)


@pytest.mark.parametrize("cached", [False, True])
def test_a_backend_without_the_vectors_keyword_still_captures_and_recalls(
    clock: FrozenClock, cached: bool
) -> None:
    """Captures never ask it for vectors; recall asks once, then lends what its
    hits carry (this one's carry their vectors, so the hop still runs)."""
    inner = _BeforeVectors()
    backend = CachedBackend(inner, ttl_s=10.0) if cached else inner
    memory = HindsightMemory(backend, HashingEmbedder(), clock=clock)
    for text in (
        "Jon lost his banker job and opened a dance studio downtown",
        "The dance studio downtown hosts a salsa night every Friday",
    ):
        memory.capture(text, namespace="u")
    memory.flush()
    for _ in range(2):  # the second recall does not ask again
        result = memory.recall(
            "What did Jon do after the banker job?",
            namespace="u",
            explain=True,
            timeout=None,
        )
        assert result.explanation is not None
        assert any("hop" in p for p in result.explanation.values())
    memory.close()


class _Remote(_ServerLike):
    """A server-like store whose calls cross a network."""

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(bm25=True, name="remote", remote=True)


@pytest.mark.parametrize("over_network", [False, True])
def test_the_hop_crosses_a_network_only_when_the_policy_says_so(
    clock: FrozenClock, over_network: bool
) -> None:
    """Against a remote store the hop's search is one more round trip: by
    default recall makes one dense search; hop_over_network adds the hop."""
    memory = HindsightMemory(
        CachedBackend(_Remote(InMemoryBackend()), ttl_s=10.0),
        HashingEmbedder(),
        clock=clock,
        policy=Policy(hop_over_network=over_network),
    )
    records = _store(
        memory,
        {
            "hit": "Jon lost his banker job and opened a dance studio downtown",
            "bridge": "The dance studio downtown hosts a salsa night every Friday",
        },
    )
    with capture_spans() as spans:
        result = memory.recall(
            "What did Jon do after the banker job?",
            namespace="u",
            explain=True,
            timeout=None,
        )
    assert result.explanation is not None
    hopped = result.explanation[records["bridge"].id].get("hop", 0.0) > 0
    paths = sorted(
        str((s.attributes or {}).get("hindsight.path"))
        for s in spans
        if s.name == RECALL_DENSE
    )
    # No "dense-cold" search: the read cache holds the tenant and none of its
    # memories is cold (tests/memory/test_recall_people.py).
    expected = ["dense", "hop"] if over_network else ["dense"]
    assert expected == paths
    assert over_network == hopped
    memory.close()
