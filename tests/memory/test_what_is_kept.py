"""Capture keeps what a person would want kept: their words, not the assistant's echo."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from hindsight_lg import HindsightMemory, SourceKind


def _contents(memory: HindsightMemory, namespace: str) -> list[str]:
    return [r.content for r in memory.list_memories(namespace)]


def test_an_assistant_reply_is_not_a_fact_about_the_user(
    memory: HindsightMemory, namespace: str
) -> None:
    """Of a turn, the user's statement is kept; the generic reply is not."""
    turn = [
        HumanMessage("I'm learning Portuguese."),
        AIMessage("Here's a generic answer."),
    ]
    memory.capture(turn, namespace=namespace, thread_id="t1")
    assert ["I'm learning Portuguese."] == _contents(memory, namespace)


def test_a_reply_restating_recalled_memories_is_not_captured(
    memory: HindsightMemory, namespace: str
) -> None:
    """ "From memory: ... | user: ..." (the assistant quoting recall) stores nothing new."""
    memory.capture("I'm vegetarian.", namespace=namespace, thread_id="t1")
    echo = AIMessage("From memory: I'm vegetarian. | user: I'm learning Portuguese.")
    memory.capture(
        [HumanMessage("What do I eat?"), echo], namespace=namespace, thread_id="t1"
    )
    kept = memory.list_memories(namespace)
    assert [] == [r.content for r in kept if r.source_kind is SourceKind.AGENT_INFERRED]
    assert not any(
        "From memory" in t or "| user" in t for t in _contents(memory, namespace)
    )


def test_a_reply_the_user_asked_to_remember_is_kept_as_agent_inferred(
    memory: HindsightMemory, namespace: str
) -> None:
    """ "Please remember this" makes the assistant's answer a memory, marked as its own."""
    turn = [
        HumanMessage("Please remember this: pick a parking spot for me."),
        AIMessage("Your parking spot is B12 on level two."),
    ]
    memory.capture(turn, namespace=namespace, thread_id="t1")
    kept = {r.content: r.source_kind for r in memory.list_memories(namespace)}
    assert SourceKind.AGENT_INFERRED == kept["Your parking spot is B12 on level two."]


def test_message_pairs_are_read_as_messages_not_their_repr(
    memory: HindsightMemory, namespace: str
) -> None:
    """LangChain's ("user", text) pairs give the text, never "('user', ...)"."""
    memory.capture([("user", "I'm learning Portuguese.")], namespace=namespace)
    assert ["I'm learning Portuguese."] == _contents(memory, namespace)


def test_stored_text_keeps_the_speakers_subject(
    memory: HindsightMemory, namespace: str
) -> None:
    """ "I also enjoy a good espresso" is stored whole, not as "enjoy a good espresso"."""
    text = "I also enjoy a good espresso now and then."
    memory.capture(text, namespace=namespace)
    assert [text] == _contents(memory, namespace)
