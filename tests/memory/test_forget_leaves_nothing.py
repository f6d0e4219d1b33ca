"""Forgetting leaves no word behind: not in summaries, merges, edges, audit, exports or prompts.

A secret is planted in one statement; the statement is then consolidated into a
summary, merged as a near-duplicate restatement into another thread's memory,
superseded by a later statement, or quoted by a reflection lesson. After each way of forgetting it (by id, by
thread, the whole namespace), every field of every record, edge and audit entry,
an export, the lexical index and recall's prompt are searched for it.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from hindsight_lg import HindsightMemory
from hindsight_lg.backends.base import MemoryBackend, Where
from hindsight_lg.memory.jobs.portability import export_namespace
from hindsight_lg.memory.jobs.reflect import reflect
from hindsight_lg.model import AuditEntry, EdgeType, Status
from hindsight_lg.testing import FrozenClock

# Unique, and read as a name: it also becomes an entity (and an entity node).
SECRET = "Zanzibar7741"
HIKE = "Went hiking in the Harz mountains with Tom{extra}, day {day} of the trip"
TRIP = "We went hiking in the Harz mountains with Tom and his dog,"
ROUTES = (
    "up to the Brocken summit and back",
    "along the river valley to the old mine",
    "around the lake near the village",
)
TEA = "I prefer green tea over coffee every single morning before work at the office"
_EVERY_STATUS = Where(statuses=())


@dataclass(frozen=True, slots=True)
class Planted:
    """Where the secret went: the memory holding it and the thread that said it."""

    memory_id: str
    thread_id: str


def _consolidated(memory: HindsightMemory, ns: str, clock: FrozenClock) -> Planted:
    """Four hiking episodes from four threads, the first naming the secret."""
    ids = []
    for day in range(4):
        extra = f" and {SECRET}" if day == 0 else ""
        [record] = memory.capture(
            HIKE.format(extra=extra, day=day),
            namespace=ns,
            thread_id=f"hike-{day}",
            source_ids=[f"hike-{day}:0"],
        )
        ids.append(record.id)
        clock.advance(days=1)
    [summary] = memory.consolidate(ns)
    assert SECRET in " ".join(summary.entities)  # the summary did take it in
    return Planted(ids[0], "hike-0")


def _merged(memory: HindsightMemory, ns: str, clock: FrozenClock) -> Planted:
    """Thread t2 restates thread t1's memory, naming the secret: the two merge."""
    [first] = memory.capture(TEA, namespace=ns, thread_id="t1", source_ids=["t1:0"])
    clock.advance(days=1)
    [again] = memory.capture(
        f"{TEA} with {SECRET}", namespace=ns, thread_id="t2", source_ids=["t2:0"]
    )
    assert again.id == first.id  # merged, not stored apart
    return Planted(first.id, "t2")


def _superseded(memory: HindsightMemory, ns: str, clock: FrozenClock) -> Planted:
    """The secret is where the person lived; a later statement supersedes it."""
    [old] = memory.capture(f"I live in {SECRET}.", namespace=ns, thread_id="t1")
    clock.advance(days=1)
    memory.capture("I live in Lisbon now.", namespace=ns, thread_id="t2")
    assert memory.get(ns, old.id).status is Status.SUPERSEDED  # type: ignore[union-attr]
    return Planted(old.id, "t1")


def _consolidated_merge(
    memory: HindsightMemory, ns: str, clock: FrozenClock
) -> Planted:
    """A restatement naming the secret merges into an episode later consolidated."""
    ids = []
    for day, route in enumerate(ROUTES):
        [record] = memory.capture(
            f"{TRIP} {route}", namespace=ns, thread_id=f"hike-{day}"
        )
        ids.append(record.id)
        clock.advance(days=1)
    [again] = memory.capture(
        f"{TRIP} {ROUTES[0]} with {SECRET}", namespace=ns, thread_id="other"
    )
    assert again.id == ids[0]
    memory.consolidate(ns)
    return Planted(ids[0], "other")


def _reflected(memory: HindsightMemory, ns: str, clock: FrozenClock) -> Planted:
    """A run's answer used the secret, the user corrected it: a lesson quotes it."""
    [wrong] = memory.capture(f"I live in {SECRET}.", namespace=ns, thread_id="t1")
    run = [
        HumanMessage("Where do I live?"),
        AIMessage(f"You live in {SECRET}."),
        HumanMessage("That's wrong, I moved to Lyon."),
    ]
    lesson = reflect(
        memory, run, namespace=ns, recalled_ids=[wrong.id], thread_id="run"
    )
    assert lesson.experience_id is not None
    return Planted(wrong.id, "t1")


SCENARIOS = {
    "consolidated": _consolidated,
    "reflected": _reflected,
    "merged": _merged,
    "superseded": _superseded,
    "consolidated-merge": _consolidated_merge,
}

Forget = Callable[[HindsightMemory, str, Planted], int]
WAYS: dict[str, Forget] = {
    "by-id": lambda m, ns, p: m.forget(ns, [p.memory_id]),
    "by-thread": lambda m, ns, p: m.forget(ns, thread_id=p.thread_id),
    "namespace": lambda m, ns, p: m.forget(ns),
}


def secret_places(memory: HindsightMemory, raw: MemoryBackend, ns: str) -> list[str]:
    """Every place of ``ns`` that still holds the secret, by name (case-insensitive).

    ``raw`` is the store under the engine's read cache.
    """
    needle = SECRET.lower()
    records = memory.backend.query(ns, _EVERY_STATUS, limit=10_000)
    places = [
        f"record {r.id}" for r in records if needle in json.dumps(r.to_dict()).lower()
    ]
    ids = [r.id for r in records]
    edges = memory.backend.all_edges(ns) + (
        memory.backend.edges(ns, ids) if ids else []
    )
    places += [
        f"edge {e.key}" for e in edges if needle in json.dumps(e.to_dict()).lower()
    ]
    places += [
        f"audit {a.op} {a.memory_id}"
        for a in memory.audit(ns)
        if needle in json.dumps(a.to_dict()).lower()
    ]
    out = io.StringIO()
    export_namespace(memory, ns, out)
    places += ["export"] if needle in out.getvalue().lower() else []
    # The engine's read cache answers lexical searches from its own index: the
    # store's index (BM25 in Milvus) is asked too.
    for name, store in (("read cache", memory.backend), ("store", raw)):
        hits = store.search_lexical(ns, [needle], _EVERY_STATUS, limit=10)
        places += [f"lexical index of the {name}: {h.record.id}" for h in hits]
    for question in (SECRET, f"Who is {SECRET}?", "green tea", "hiking with Tom"):
        prompt = memory.recall(question, namespace=ns).to_prompt()
        places += [f"prompt for {question!r}"] if needle in prompt.lower() else []
    return places


@pytest.mark.parametrize("way", sorted(WAYS))
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_forgetting_leaves_the_secret_nowhere(
    memory: HindsightMemory,
    backend: MemoryBackend,
    namespace: str,
    clock: FrozenClock,
    scenario: str,
    way: str,
) -> None:
    """After forgetting, no record, edge, audit entry, export, index or prompt holds it."""
    planted = SCENARIOS[scenario](memory, namespace, clock)
    planted_in = secret_places(memory, backend, namespace)
    assert planted_in != []  # the search does see it before
    WAYS[way](memory, namespace, planted)
    assert [] == secret_places(memory, backend, namespace)


def _summary(memory: HindsightMemory, ns: str) -> list[tuple[str, list[str]]]:
    """Each consolidated memory's id and the episodes its edges derive it from."""
    rows = memory.backend.query(ns, Where(statuses=(), tiers=("semantic",)), limit=99)
    return [
        (
            r.id,
            sorted(
                e.dst
                for e in memory.edges(ns, r.id)
                if e.type is EdgeType.DERIVED_FROM and e.src == r.id
            ),
        )
        for r in rows
    ]


@pytest.mark.parametrize("way", ["by-id", "by-thread"])
def test_a_summary_is_rebuilt_from_the_episodes_that_remain(
    memory: HindsightMemory, namespace: str, clock: FrozenClock, way: str
) -> None:
    """Forgetting one episode of four keeps the summary, derived from the other three."""
    planted = _consolidated(memory, namespace, clock)
    [(summary_id, _)] = _summary(memory, namespace)
    WAYS[way](memory, namespace, planted)
    rest = sorted(
        r.id
        for r in memory.list_memories(namespace, history=True)
        if r.tier.value == "episodic"
    )
    summary = memory.get(namespace, summary_id)
    assert summary is not None
    assert ([(summary_id, rest)], rest) == (
        _summary(memory, namespace),
        sorted(summary.meta["derived_from"]),
    )
    assert "Harz" in summary.content and summary.thread_id != planted.thread_id
    trail = memory.audit(namespace, summary_id)
    assert ["consolidate", "rederive"] == [a.op for a in trail]
    assert sorted(summary.source_ids) == ["hike-1:0", "hike-2:0", "hike-3:0"]


def test_a_summary_whose_episodes_are_all_forgotten_is_dropped(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """With none of its episodes left, the consolidated memory goes with them."""
    _consolidated(memory, namespace, clock)
    episodes = [
        r.id
        for r in memory.list_memories(namespace, history=True)
        if r.tier.value == "episodic"
    ]
    memory.forget(namespace, episodes)
    assert ([], []) == (
        memory.list_memories(namespace, history=True),
        [a.op for a in memory.audit(namespace)],
    )


def test_a_merge_keeps_ids_not_the_restated_text(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """A merged restatement's words are in neither the memory's details nor its audit."""
    planted = _merged(memory, namespace, clock)
    record = memory.get(namespace, planted.memory_id)
    assert record is not None
    trail = memory.audit(namespace, planted.memory_id)
    merge = next(a for a in trail if a.op == "merge")
    restated = f"{TEA} with {SECRET}"
    assert restated not in json.dumps(record.meta) + json.dumps(merge.detail)
    assert ("t2", ["t2:0"]) == (merge.detail["thread_id"], merge.detail["source_ids"])


def test_forgetting_a_thread_takes_back_what_its_restatement_added(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """The memory t2 restated stays, with t1's sources and names only."""
    planted = _merged(memory, namespace, clock)
    memory.forget(namespace, thread_id="t2")
    record = memory.get(namespace, planted.memory_id)
    assert record is not None
    assert (record.content, record.source_ids, record.entities) == (TEA, ["t1:0"], [])
    assert ["create", "unmerge"] == [
        a.op for a in memory.audit(namespace, planted.memory_id)
    ]


def test_a_name_two_threads_restated_stays_until_both_are_forgotten(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """A name added by one restatement and repeated by another goes with the last."""
    [first] = memory.capture(TEA, namespace=namespace, thread_id="t1")
    for thread in ("t2", "t3"):
        clock.advance(days=1)
        memory.capture(f"{TEA} with {SECRET}", namespace=namespace, thread_id=thread)
    memory.forget(namespace, thread_id="t2")
    kept = memory.get(namespace, first.id)
    memory.forget(namespace, thread_id="t3")
    gone = memory.get(namespace, first.id)
    assert kept is not None and gone is not None
    assert ([SECRET], []) == (kept.entities, gone.entities)


def test_a_restatement_without_the_name_does_not_keep_it(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """A later restatement that omits a name another thread added leaves it to go."""
    [first] = memory.capture(TEA, namespace=namespace, thread_id="t1")
    for thread, text in (("t2", f"{TEA} with {SECRET}"), ("t3", f"{TEA}!")):
        clock.advance(days=1)
        [again] = memory.capture(text, namespace=namespace, thread_id=thread)
        assert again.id == first.id
    memory.forget(namespace, thread_id="t2")
    record = memory.get(namespace, first.id)
    assert record is not None and [] == record.entities


def test_consolidation_audits_ids_not_the_summary_text(
    memory: HindsightMemory, namespace: str, clock: FrozenClock
) -> None:
    """The consolidate entry names the episodes; the summary's text is in the record."""
    _consolidated(memory, namespace, clock)
    [(summary_id, episodes)] = _summary(memory, namespace)
    [entry] = [a for a in memory.audit(namespace, summary_id)]
    assert ("consolidate", {"derived_from": episodes}) == (
        entry.op,
        {k: sorted(v) for k, v in entry.detail.items()},
    )


def test_old_merge_entries_and_details_with_text_are_scrubbed_by_forgetting(
    memory: HindsightMemory,
    backend: MemoryBackend,
    namespace: str,
    clock: FrozenClock,
) -> None:
    """Text an older version kept of a merge leaves the store when a thread is forgotten."""
    [first] = memory.capture(TEA, namespace=namespace, thread_id="t1")
    restated = f"{TEA} with {SECRET}"
    old = memory.get(namespace, first.id)
    assert old is not None
    memory.update(namespace, first.id, meta={**old.meta, "details": [restated]})
    legacy = AuditEntry(namespace, first.id, "merge", clock(), {"content": restated})
    memory.append_audit(namespace, [legacy])
    memory.forget(namespace, thread_id="t2")
    assert [] == secret_places(memory, backend, namespace)
    assert memory.get(namespace, first.id) is not None


def test_an_old_consolidate_entry_with_text_is_scrubbed_when_its_summary_is_rebuilt(
    memory: HindsightMemory,
    backend: MemoryBackend,
    namespace: str,
    clock: FrozenClock,
) -> None:
    """A summary's old audit text goes when forgetting one of its episodes rebuilds it."""
    planted = _consolidated(memory, namespace, clock)
    [(summary_id, episodes)] = _summary(memory, namespace)
    summary = memory.get(namespace, summary_id)
    assert summary is not None
    detail = {"content": summary.content, "derived_from": episodes}
    entry = AuditEntry(namespace, summary_id, "consolidate", clock(), detail)
    memory.append_audit(namespace, [entry])
    memory.forget(namespace, [planted.memory_id])
    assert [] == secret_places(memory, backend, namespace)
