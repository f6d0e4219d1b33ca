"""A scripted chat model that supports ``bind_tools`` and tool calls, for offline agents.

The templates and :mod:`hindsight_lg.deploy` run on it when no real model is
named, so it is production code; :mod:`hindsight_lg.testing` re-exports it for
tests.

langchain_core's fake chat models raise on ``bind_tools`` (and so on
``with_structured_output``), which ``create_agent`` and tool-calling graphs
need. This one subclasses :class:`FakeMessagesListChatModel` and accepts tools.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

Responder = Callable[[list[BaseMessage]], "BaseMessage | str"]

__all__ = ["FakeToolChatModel", "Responder", "echo_memories", "tool_call"]


def tool_call(name: str, args: dict[str, Any], call_id: str | None = None) -> AIMessage:
    """An assistant message that calls one tool (for scripting a fake model)."""
    return AIMessage(
        content="",
        tool_calls=[
            {"name": name, "args": args, "id": call_id or uuid.uuid4().hex[:12]}
        ],
    )


class FakeToolChatModel(FakeMessagesListChatModel):
    """A fake chat model with tool support: scripted replies or a reply function.

    Replies come from ``respond(messages)`` when it is set, else from
    ``responses`` in order (cycling). Every call's messages are kept in
    ``calls``; the names of bound tools in ``bound_tools``.

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> model = FakeToolChatModel(responses=[tool_call("search", {"q": "tea"}),
        ...                                     AIMessage("Green tea.")])
        >>> bound = model.bind_tools([])
        >>> bound.invoke([HumanMessage("hi")]).tool_calls[0]["name"]
        'search'
        >>> bound.invoke([HumanMessage("and?")]).content
        'Green tea.'
    """

    responses: list[BaseMessage] = Field(default_factory=list)
    respond: Responder | None = None
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[str] = Field(default_factory=list)

    def bind_tools(
        self,
        tools: Sequence[Any],
        *,
        tool_choice: Any = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept tools like a real model; they are recorded, not executed."""
        schemas = [convert_to_openai_tool(t) for t in tools]
        self.bound_tools = [s["function"]["name"] for s in schemas]
        return self.bind(tools=schemas, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls.append(list(messages))
        reply = self._next(messages)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _next(self, messages: list[BaseMessage]) -> BaseMessage:
        if self.respond is not None:
            out = self.respond(list(messages))
            return AIMessage(out) if isinstance(out, str) else out
        if not self.responses:
            raise ValueError("FakeToolChatModel needs responses or respond=")
        reply = self.responses[self.i % len(self.responses)]
        self.i += 1
        # A copy, so LangChain's run id lands on this reply only: re-used
        # objects would share an id and replace each other in the thread.
        return reply.model_copy(deep=True)

    @property
    def _llm_type(self) -> str:
        return "hindsight-fake-tool-chat-model"


# A memory line's text after its annotations, when the assistant said it: the
# speaker capture gives an assistant's reply, after a status such as "(cold)".
_ASSISTANT_SAID = re.compile(r"^(?:\([a-z]+\) )?assistant:")


def _quoted(line: str) -> str | None:
    """What the echo says of one memory line (``None``: leave it out).

    The assistant's own earlier replies are left out: offline they are
    themselves quotes of memories ("From memory: ..."), kept when the user
    asked to remember or a tool reported, and quoting them repeats memories
    inside memories. Other agent-inferred lines are notes a memory tool saved
    on the user's request; they are quoted, marked, or an offline agent looks
    as if it forgot what its tool saved.
    """
    head, _, text = line.partition("] ")
    if not text or _ASSISTANT_SAID.match(text):
        return None
    return f"{text} (agent-inferred)" if "agent-inferred" in head else text


def echo_memories(messages: list[BaseMessage]) -> AIMessage:
    """A reply function for :class:`FakeToolChatModel`: quote the memory lines.

    It answers with the recalled-memory lines of the system prompt (the part
    after the annotations), so offline demos and tests show what reached the
    model. Agent-inferred lines (what a memory tool saved) are marked
    "(agent-inferred)"; what the assistant itself said is left out.
    """
    quoted = (
        _quoted(line)
        for m in messages
        if m.type == "system"
        for line in str(m.content).splitlines()
        if line.startswith("- [")
    )
    lines = [q for q in quoted if q]
    if not lines:
        return AIMessage("I don't have anything on that yet; noted.")
    return AIMessage("From memory: " + " | ".join(lines[:3]))
