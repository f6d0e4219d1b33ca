"""The span tree of recall and capture, checked on real OpenTelemetry SDK spans."""

from __future__ import annotations

import json
import time
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from hindsight_lg import HindsightMemory
from hindsight_lg.testing import capture_spans


def _one(spans: list[ReadableSpan], name: str) -> ReadableSpan:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, [s.name for s in spans]
    return found[0]


def _children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[str]:
    assert parent.context is not None
    return [
        s.name
        for s in spans
        if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_recall_is_a_retriever_with_one_child_per_path(memory: HindsightMemory) -> None:
    """A recall span is a RETRIEVER whose children are embed and each search path."""
    memory.capture("I prefer green tea over coffee", namespace="u1")
    with capture_spans() as spans:
        memory.recall("what tea does the user prefer?", namespace="u1")
    recall = _one(spans, "hindsight.recall")
    attrs = _attrs(recall)
    assert attrs["openinference.span.kind"] == "RETRIEVER"
    assert attrs["gen_ai.operation.name"] == "search_memory"
    assert attrs["hindsight.namespace"] == "u1"
    assert {
        "hindsight.embed",
        "hindsight.recall.dense",
        "hindsight.recall.lexical",
        "hindsight.recall.recency",
        "hindsight.recall.graph",
    } <= set(_children(spans, recall))


def test_recall_path_spans_wrap_their_store_calls(memory: HindsightMemory) -> None:
    """Each path span contains the store call it made, as a client span."""
    memory.capture("I prefer green tea over coffee", namespace="u1")
    with capture_spans() as spans:
        memory.recall("green tea", namespace="u1")
    # The query's dense search, and the second hop's from its best hit.
    dense = [s for s in spans if s.name == "hindsight.recall.dense"]
    assert sorted(_attrs(s)["hindsight.path"] for s in dense) == ["dense", "hop"]
    for span in dense:
        assert _children(spans, span) == ["hindsight.store.search_dense"]
    stores = [s for s in spans if s.name == "hindsight.store.search_dense"]
    assert len(stores) == 2
    for store in stores:
        assert _attrs(store)["db.operation.name"] == "search_dense"
        assert _attrs(store)["db.response.returned_rows"] >= 1


def test_recall_span_lists_memories_as_openinference_documents(
    memory: HindsightMemory,
) -> None:
    """Recalled memories appear as retrieval documents with id, score and paths."""
    [tea] = memory.capture("I prefer green tea over coffee", namespace="u1")
    with capture_spans() as spans:
        result = memory.recall("green tea", namespace="u1")
    attrs = _attrs(_one(spans, "hindsight.recall"))
    assert list(attrs["hindsight.memory_ids"]) == result.ids == [tea.id]
    assert attrs["retrieval.documents.0.document.id"] == tea.id
    assert attrs["retrieval.documents.0.document.score"] == result.memories[0].score
    meta = json.loads(attrs["retrieval.documents.0.document.metadata"])
    assert meta["paths"] == {
        k: round(v, 4) for k, v in result.memories[0].paths.items()
    }
    assert attrs["hindsight.used_tokens"] == result.used_tokens
    assert attrs["output.value"] == result.to_prompt()
    assert attrs["hindsight.asked"] == result.asked == "fact"
    with capture_spans() as spans:
        gathered = memory.recall("What teas have I liked?", namespace="u1")
    assert _attrs(_one(spans, "hindsight.recall"))["hindsight.asked"] == "gather"
    assert gathered.asked == "gather"


def test_recall_span_counts_candidates_per_path(memory: HindsightMemory) -> None:
    """The recall span says how many candidates each path found and which won."""
    memory.capture("I prefer green tea over coffee", namespace="u1")
    memory.capture("My sister lives in Lisbon", namespace="u1")
    with capture_spans() as spans:
        result = memory.recall("green tea", namespace="u1")
    attrs = _attrs(_one(spans, "hindsight.recall"))
    assert attrs["hindsight.candidates.recency"] == 2
    assert attrs["hindsight.candidates.lexical"] >= 1
    lexical_wins = sum("lexical" in m.paths for m in result.memories)
    assert attrs["hindsight.selected_by.lexical"] == lexical_wins


def test_embedding_span_names_the_model_and_text(memory: HindsightMemory) -> None:
    """The query embedding span is an EMBEDDING span with the model and the text."""
    with capture_spans() as spans:
        memory.recall("green tea", namespace="u1")
    attrs = _attrs(_one(spans, "hindsight.embed"))
    assert attrs["openinference.span.kind"] == "EMBEDDING"
    assert attrs["embedding.model_name"] == memory.embedder.model_id
    assert attrs["embedding.embeddings.0.embedding.text"] == "green tea"


def test_recall_timeout_is_a_span_event_with_a_reason(memory: HindsightMemory) -> None:
    """A recall past its deadline ends empty and leaves a timeout event on its span."""
    memory.capture("I prefer green tea over coffee", namespace="u1")
    slow = memory._parts().searcher.recall

    def stalled(*args: Any) -> Any:
        time.sleep(0.3)
        return slow(*args)

    memory._parts().searcher.recall = stalled  # type: ignore[method-assign]
    with capture_spans() as spans:
        result = memory.recall("green tea", namespace="u1", timeout=0.05)
    assert result.timed_out
    recall = _one(spans, "hindsight.recall")
    [event] = [e for e in recall.events if e.name == "hindsight.timeout"]
    assert "0.05" in str(dict(event.attributes or {})["hindsight.reason"])
    assert _attrs(recall)["hindsight.degraded"] is True


def test_capture_tree_has_encode_embed_and_write(memory: HindsightMemory) -> None:
    """A capture span holds encode, embed and write, with the created ids."""
    with capture_spans() as spans:
        [tea] = memory.capture(
            "I prefer green tea", namespace="u1", thread_id="t1", source_ids=["m1"]
        )
    capture = _one(spans, "hindsight.capture")
    attrs = _attrs(capture)
    assert attrs["gen_ai.operation.name"] == "create_memory"
    assert attrs["session.id"] == "t1"
    assert list(attrs["hindsight.created_ids"]) == [tea.id]
    assert _children(spans, capture)[:3] == [
        "hindsight.encode",
        "hindsight.embed",
        "hindsight.write",
    ]
    assert list(_attrs(_one(spans, "hindsight.encode"))["hindsight.source_ids"]) == [
        "m1"
    ]


def test_merge_is_an_update_span_naming_the_kept_memory(
    memory: HindsightMemory,
) -> None:
    """Capturing a duplicate makes a merge span and lists the id it merged into."""
    [tea] = memory.capture("I prefer green tea over coffee", namespace="u1")
    with capture_spans() as spans:
        memory.capture("I prefer green tea over coffee", namespace="u1")
    merge = _attrs(_one(spans, "hindsight.merge"))
    assert merge["gen_ai.operation.name"] == "update_memory"
    assert merge["hindsight.memory_id"] == tea.id
    assert list(_attrs(_one(spans, "hindsight.capture"))["hindsight.merged_ids"]) == [
        tea.id
    ]


def test_supersede_span_names_the_superseded_memory(memory: HindsightMemory) -> None:
    """A contradiction makes a supersede span, and capture lists the superseded id."""
    [old] = memory.capture("I like Python", namespace="u1")
    with capture_spans() as spans:
        [new] = memory.capture("I don't like Python", namespace="u1")
    attrs = _attrs(_one(spans, "hindsight.supersede"))
    assert (attrs["hindsight.memory_id"], attrs["hindsight.superseded_id"]) == (
        new.id,
        old.id,
    )
    capture = _attrs(_one(spans, "hindsight.capture"))
    assert list(capture["hindsight.superseded_ids"]) == [old.id]


def test_low_salience_turn_is_reported_not_promoted(memory: HindsightMemory) -> None:
    """A turn below the salience floor is named on the capture span as not promoted."""
    with capture_spans() as spans:
        written = memory.capture("ok", namespace="u1")
    assert written == []
    attrs = _attrs(_one(spans, "hindsight.capture"))
    assert list(attrs["hindsight.not_promoted"]) == ["ok"]


def test_forget_is_a_delete_memory_span(memory: HindsightMemory) -> None:
    """Forgetting is traced as delete_memory with the number deleted."""
    [tea] = memory.capture("I prefer green tea", namespace="u1")
    with capture_spans() as spans:
        memory.forget("u1", [tea.id])
    attrs = _attrs(_one(spans, "hindsight.forget"))
    assert (attrs["gen_ai.operation.name"], attrs["hindsight.count"]) == (
        "delete_memory",
        1,
    )
