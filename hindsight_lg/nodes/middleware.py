"""``HindsightMiddleware`` for ``langchain.agents.create_agent`` (the ``agents`` extra).

The same engine as the nodes, through hooks: recall in ``before_agent``, the
memory block added to every model call with ``request.override(system_message=...)``
(never written into the thread), capture and reflection in ``after_agent``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, NotRequired

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
    )
    from langchain.agents.middleware.types import PrivateStateAttr
except ImportError:  # pragma: no cover - exercised only without the extra
    raise ImportError("pip install 'hindsight-lg[agents]'") from None
from langchain_core.messages import SystemMessage
from langgraph.config import get_config
from langgraph.runtime import Runtime

from hindsight_lg._messages import text_of
from hindsight_lg.identity import Identity, IdentityRule
from hindsight_lg.memory import HindsightMemory, RecallResult, Reflection
from hindsight_lg.nodes._adapter import Who, arecalled, hand_off, recalled
from hindsight_lg.nodes._run import Reflector


class HindsightAgentState(AgentState[Any]):
    """Agent state plus the rendered memory block (private: not in input/output)."""

    hindsight_memories: NotRequired[Annotated[str, PrivateStateAttr]]


def _merge(system: SystemMessage | None, block: str) -> SystemMessage:
    if system is None:
        return SystemMessage(block)
    return SystemMessage(f"{text_of(system)}\n\n{block}")


class HindsightMiddleware(AgentMiddleware[HindsightAgentState, Any, Any]):
    """Long-term memory for ``create_agent``: recall, ephemeral injection, capture, reflect.

    Args:
        memory: the engine.
        reflect: reflect at the end of each run (reinforce / weaken / lesson):
            ``True`` or ``"background"`` queues it on the capture worker (the
            run does not wait; ``memory.flush()`` does), ``"sync"`` runs it
            inline, ``False`` not at all.
        llm: chat model for reflection (heuristics without one).
        agent_id: fixed agent id (else ``agent_id`` from context / configurable).
        scope: scope of captured memories.
        identity: whose memory (see :mod:`hindsight_lg.identity`; the
            documented default rule when ``None``).
        strict: raise when a run names no user; ``False`` logs a warning
            once per thread and runs without memory.
        capture_tools: also capture what the assistant said right after a
            tool result (skipped by default: it mostly restates tool output).
        recall_options: passed to :meth:`HindsightMemory.recall`
            (``budget_tokens``, ``k``, ``timeout``...).

    Example:
        >>> from langchain.agents import create_agent  # doctest: +SKIP
        >>> agent = create_agent(model, tools=[],       # doctest: +SKIP
        ...     middleware=[HindsightMiddleware(memory)])
    """

    state_schema = HindsightAgentState

    def __init__(
        self,
        memory: HindsightMemory,
        *,
        reflect: bool | Literal["background", "sync"] = True,
        llm: Any = None,
        agent_id: str | None = None,
        scope: str = "private",
        identity: IdentityRule | None = None,
        strict: bool = True,
        capture_tools: bool = False,
        **recall_options: Any,
    ) -> None:
        super().__init__()
        if reflect not in (True, False, "background", "sync"):
            raise ValueError(
                f"reflect must be a bool, 'background' or 'sync', not {reflect!r}"
            )
        self.memory = memory
        self.reflect: Literal["background", "sync"] | None = (
            ("background" if reflect is True else reflect) if reflect else None
        )
        self.llm = llm
        self.agent_id = agent_id
        self.scope = scope
        self.identity = identity
        self.strict = strict
        self.capture_tools = capture_tools
        self.recall_options = recall_options
        self._who = Who("HindsightMiddleware", agent_id, identity, strict)
        self._reflector = (
            Reflector(memory, llm, self.reflect) if self.reflect is not None else None
        )

    @property
    def last_reflection(self) -> Reflection | None:
        """The latest reflection this middleware finished (``None`` before any)."""
        return self._reflector.last if self._reflector is not None else None

    def _find(self, runtime: Runtime[Any]) -> Identity | None:
        return self._who.find(get_config(), runtime.context)

    async def _afind(self, runtime: Runtime[Any]) -> Identity | None:
        return await self._who.afind(get_config(), runtime.context)

    @staticmethod
    def _block(result: RecallResult | None) -> dict[str, Any]:
        return {"hindsight_memories": "" if result is None else result.to_prompt()}

    # -- before_agent: recall ---------------------------------------------------

    def before_agent(
        self, state: HindsightAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        who, messages = self._find(runtime), list(state["messages"])
        return self._block(recalled(self.memory, who, messages, self.recall_options))

    async def abefore_agent(
        self, state: HindsightAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        who, messages = await self._afind(runtime), list(state["messages"])
        return self._block(
            await arecalled(self.memory, who, messages, self.recall_options)
        )

    # -- wrap_model_call: ephemeral injection ---------------------------------

    def _with_memories(self, request: ModelRequest[Any]) -> ModelRequest[Any]:
        block = str(request.state.get("hindsight_memories") or "")
        if not block:
            return request
        return request.override(system_message=_merge(request.system_message, block))

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> ModelResponse[Any]:
        return handler(self._with_memories(request))

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> ModelResponse[Any]:
        return await handler(self._with_memories(request))

    # -- after_agent: capture and reflect -------------------------------------

    def _capture(self, who: Identity, messages: list[Any]) -> None:
        hand_off(self.memory, who, messages, scope=self.scope, tools=self.capture_tools)

    def after_agent(
        self, state: HindsightAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        who = self._find(runtime)
        if who is None:
            return None
        messages = list(state["messages"])
        self._capture(who, messages)
        if self._reflector is not None:
            self._reflector.run(who, messages)
        return None

    async def aafter_agent(
        self, state: HindsightAgentState, runtime: Runtime[Any]
    ) -> dict[str, Any] | None:
        who = await self._afind(runtime)
        if who is None:
            return None
        messages = list(state["messages"])
        # submit() fsyncs the capture spool: off the event loop.
        await asyncio.to_thread(self._capture, who, messages)
        if self._reflector is not None:
            await self._reflector.arun(who, messages)
        return None
