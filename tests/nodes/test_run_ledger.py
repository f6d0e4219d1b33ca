"""The run ledger: owned by the engine its nodes and middleware share."""

from __future__ import annotations

import gc
import weakref

from hindsight_lg import HindsightMemory
from hindsight_lg.identity import Identity
from hindsight_lg.nodes._run import RecallNote, ledger_for, reflection_args
from hindsight_lg.testing import HashingEmbedder, InMemoryBackend

WHO = Identity("u42", thread_id="t1", user_id="u42")


def test_what_one_engine_recalled_is_judged_by_its_reflection(
    memory: HindsightMemory,
) -> None:
    ledger_for(memory).note(WHO, RecallNote("tea?", ["m1", "m2"], 5.0))
    args = reflection_args(memory, WHO, llm=None)
    assert (["m1", "m2"], "tea?", 5.0) == (
        args["recalled_ids"],
        args["query"],
        args["recalled_at"],
    )
    again = reflection_args(memory, WHO, llm=None)  # read once; kept as the answer's
    assert ([], ["m1", "m2"]) == (again["recalled_ids"], again["answered_ids"])


def test_two_engines_on_one_store_keep_their_own_ledgers() -> None:
    backend = InMemoryBackend()
    first = HindsightMemory(backend, HashingEmbedder())
    second = HindsightMemory(backend, HashingEmbedder())
    try:
        ledger_for(first).note(WHO, RecallNote("tea?", ["m1"]))
        assert ledger_for(first) is ledger_for(first)
        assert ledger_for(first) is not ledger_for(second)
        assert [] == reflection_args(second, WHO, llm=None)["recalled_ids"]
        assert ["m1"] == reflection_args(first, WHO, llm=None)["recalled_ids"]
    finally:
        first.close()
        second.close()


def test_the_ledger_goes_with_its_engine() -> None:
    engine = HindsightMemory(InMemoryBackend(), HashingEmbedder())
    ledger = weakref.ref(ledger_for(engine))
    engine.close()
    del engine
    gc.collect()
    assert ledger() is None
