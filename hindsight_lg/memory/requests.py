"""What a capture and a recall ask for, checked once at the engine's door.

:meth:`HindsightMemory.capture <hindsight_lg.memory.engine.HindsightMemory.capture>`
and ``submit`` build a :class:`CaptureRequest` with :func:`capture_request`,
``recall`` a :class:`RecallRequest` with :func:`recall_request`. Each is
frozen: what the caller passed is checked (and normalised) there, once, by
one validator, and the parts behind the door (the spool, the background
worker, the writer, the searcher) read its fields without checking again.
The one exception is the spool's replay, which reads entries back from disk
and checks them with the same validator before writing.

A capture travels through the background worker and the spool as its
:meth:`CaptureRequest.payload`, a JSON-ready dict of the ``capture`` keyword
arguments (the spool file format).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hindsight_lg._messages import as_message, message_key, plain_messages
from hindsight_lg._text import clip_middle
from hindsight_lg.backends.base import (
    MAX_LABEL_BYTES,
    check_labels,
    check_namespace,
    check_text,
    fit_label,
)
from hindsight_lg.model import Scope

#: The store keeps agent and thread ids in VARCHAR(512) fields (UTF-8 bytes).
MAX_ID_BYTES = 512

Content = str | list[dict[str, Any]]


class DefaultTimeout(enum.Enum):
    """The type of :data:`DEFAULT_TIMEOUT`."""

    TIMEOUT = "the policy's recall_timeout_s"


#: ``recall(timeout=DEFAULT_TIMEOUT)``: the policy's ``recall_timeout_s``.
DEFAULT_TIMEOUT: Final = DefaultTimeout.TIMEOUT


@dataclass(frozen=True, slots=True)
class CaptureRequest:
    """One checked capture: the turn and where it goes.

    Attributes:
        content: the turn: a plain text, or messages as plain dicts.
        namespace: the tenant.
        agent_id: the writing agent.
        thread_id: the conversation thread.
        speaker: who said a plain-text turn.
        event_time: when it was said (POSIX seconds); ``None``: when written.
        source_ids: message or dialogue-turn ids this turn came from.
        scope: who may read what it becomes.
    """

    content: Content
    namespace: str
    agent_id: str | None = None
    thread_id: str | None = None
    speaker: str | None = None
    event_time: float | None = None
    source_ids: tuple[str, ...] | None = None
    scope: Scope = Scope.PRIVATE

    def payload(self) -> dict[str, Any]:
        """The request as ``capture`` keyword arguments, ready for JSON."""
        return {
            "messages_or_text": self.content,
            "namespace": self.namespace,
            "agent_id": self.agent_id,
            "thread_id": self.thread_id,
            "speaker": self.speaker,
            "event_time": self.event_time,
            "source_ids": None if self.source_ids is None else list(self.source_ids),
            "scope": self.scope.value,
        }


def capture_request(
    messages_or_text: Any,
    *,
    namespace: Any,
    agent_id: Any = None,
    thread_id: Any = None,
    speaker: Any = None,
    event_time: Any = None,
    source_ids: Sequence[str] | None = None,
    scope: Any = Scope.PRIVATE,
) -> CaptureRequest:
    """Check capture arguments once; what the store cannot hold fails here.

    Raises:
        ValueError: a namespace :func:`check_namespace` refuses, an id longer
            than 512 bytes of UTF-8, a speaker or source id over 512 bytes,
            NUL or a lone surrogate in the turn's text, an id, the speaker
            or a source id (a message's id or name is made to fit instead:
            :func:`~hindsight_lg.backends.base.fit_label`), more than 256
            source ids, an unknown scope, or an ``event_time``
            that is NaN, infinite or outside the years 1 to 9999.
        TypeError: an id or speaker that is not a string, or an
            ``event_time`` that is not a number (a string such as ``"123"``
            included).
    """
    check_namespace(namespace)
    for name, value in (("agent_id", agent_id), ("thread_id", thread_id)):
        _check_id(name, value)
    if speaker is not None:
        check_text(speaker, "speaker", MAX_LABEL_BYTES)
    if source_ids is not None:
        if isinstance(source_ids, (str, bytes)):
            raise TypeError("source_ids must be a list of str, not one string")
        source_ids = check_labels(list(source_ids), "source_ids")
    return CaptureRequest(
        content=_content(messages_or_text),
        namespace=namespace,
        agent_id=agent_id,
        thread_id=thread_id,
        speaker=speaker,
        event_time=None if event_time is None else _event_time(event_time),
        source_ids=None if source_ids is None else tuple(source_ids),
        scope=Scope(scope),
    )


def _event_time(value: object) -> float:
    # Imported here: timeparse's phrase tables load with the first capture
    # that names a time, not with every engine.
    from hindsight_lg.memory.language.timeparse import check_event_time

    return check_event_time(value)


def from_payload(payload: Mapping[str, Any]) -> CaptureRequest:
    """A request from its :meth:`CaptureRequest.payload`, checked again.

    For payloads read back from a spool file, which may have been written by
    another version or damaged on disk.

    Raises:
        ValueError, TypeError: as :func:`capture_request`; ``KeyError``
            without ``messages_or_text`` or ``namespace``.
    """
    fields = {k: v for k, v in payload.items() if k != "messages_or_text"}
    return capture_request(payload["messages_or_text"], **fields)


def unchecked(payload: Mapping[str, Any]) -> CaptureRequest:
    """A request from a payload the engine made itself, not checked again.

    For the background worker's items: ``submit`` checked them (the worker
    may have joined the messages of several into one).
    """
    source_ids = payload.get("source_ids")
    return CaptureRequest(
        content=payload["messages_or_text"],
        namespace=payload["namespace"],
        agent_id=payload.get("agent_id"),
        thread_id=payload.get("thread_id"),
        speaker=payload.get("speaker"),
        event_time=payload.get("event_time"),
        source_ids=None if source_ids is None else tuple(source_ids),
        scope=Scope(payload.get("scope", Scope.PRIVATE)),
    )


def _check_id(name: str, value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    _storable(value, name)
    if len(value.encode("utf-8", "surrogatepass")) > MAX_ID_BYTES:
        raise ValueError(
            f"{name} is longer than {MAX_ID_BYTES} bytes of UTF-8: "
            "use a shorter id (a hash of a long one works)"
        )


def _content(messages_or_text: Any) -> Content:
    """A turn as text or plain message dicts (what a spool can write as JSON)."""
    if isinstance(messages_or_text, bytes):
        raise ValueError("capture() takes text or messages, not bytes")
    if isinstance(messages_or_text, str):
        return _storable(messages_or_text, "text")
    many = as_message(messages_or_text)
    plain = plain_messages(many if isinstance(many, (list, tuple)) else [many])
    for message in plain:
        # Refused here, where submit() can still tell its caller; found on the
        # worker it would only reach the dead letters.
        _storable(message["content"], "text")
        for key in ("id", "name"):
            if key in message:  # a client's label is made to fit, never refused
                message[key] = fit_label(message[key])
    return plain


def message_keys(messages: Sequence[Any]) -> list[str]:
    """The keys a capture claims ``messages`` by, their ids fitted as submit fits them.

    For callers that mark messages captured without capturing them (a tool
    that saved one, a saver claiming a thread's earlier turns): the raw id
    of a message whose id submit cleans or cuts would not match the message
    a capture path sees later.
    """
    plain = plain_messages(list(messages))
    for message in plain:
        if "id" in message:
            message["id"] = fit_label(message["id"])
    return [message_key(m) for m in plain]


def _storable(text: str, what: str) -> str:
    """``text`` unless it holds NUL or a lone surrogate (no store keeps either).

    Any length passes: long text is cut by the writer, long names by the turn.
    """
    return check_text(text, what, limit=_ANY_LENGTH)


_ANY_LENGTH = 1 << 62


@dataclass(frozen=True, slots=True)
class RecallRequest:
    """One checked recall.

    Attributes:
        query: the question or the user's latest message.
        namespace: the tenant to search.
        budget_tokens: size of the rendered block (positive).
        now: the time the recall scores recency against (POSIX seconds).
        k: how many memories at most; sized to the query when ``None``.
        explain: attach per-path scores and why others were cut.
        agent_id: the reading agent.
        context: recent messages, used to extract extra probes.
        include_experience: also return unconfirmed experience lessons.
        cut_chars: characters cut from the query and context as given
            (``max_chars`` of :func:`recall_request`).
    """

    query: str
    namespace: str
    budget_tokens: int
    now: float
    k: int | None = None
    explain: bool = False
    agent_id: str | None = None
    context: tuple[str, ...] = ()
    include_experience: bool = False
    cut_chars: int = 0


def recall_request(
    query: str,
    *,
    namespace: str,
    budget_tokens: int,
    now: float,
    k: int | None = None,
    explain: bool = False,
    agent_id: str | None = None,
    context: Sequence[str] = (),
    include_experience: bool = False,
    max_chars: int | None = None,
) -> RecallRequest:
    """Check recall arguments once.

    ``max_chars``: the most the recall's readers see of the query, and of its
    context (the latest messages kept); what is past it is cut before any
    reader runs and counted in ``cut_chars``.

    Raises:
        ValueError: an empty namespace or a budget that is not positive.
    """
    check_namespace(namespace)
    if budget_tokens <= 0:
        raise ValueError("budget_tokens must be positive")
    cut = 0
    if max_chars is not None:
        query, cut = clip_middle(query, max_chars)
        context, cut_context = _latest_within(context, max_chars)
        cut += cut_context
    return RecallRequest(
        query=query,
        namespace=namespace,
        budget_tokens=budget_tokens,
        now=now,
        k=k,
        explain=explain,
        agent_id=agent_id,
        context=tuple(context),
        include_experience=include_experience,
        cut_chars=cut,
    )


def _latest_within(messages: Sequence[str], max_chars: int) -> tuple[list[str], int]:
    """The latest ``messages`` within ``max_chars`` in all; returns them and the cut."""
    kept: list[str] = []
    cut = 0
    room = max_chars
    for message in reversed(messages):
        if room <= 0:
            cut += len(message)
            continue
        text, lost = clip_middle(message, room)
        kept.append(text)
        cut += lost
        room -= len(message) - lost
    kept.reverse()
    return kept, cut


__all__ = [
    "MAX_ID_BYTES",
    "CaptureRequest",
    "RecallRequest",
    "capture_request",
    "from_payload",
    "recall_request",
    "unchecked",
]
