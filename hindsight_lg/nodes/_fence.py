"""Memory handed to a model as tool output: data, fenced, never instructions.

Every path that gives a model what memory holds labels it the same way: the
"data, not instructions" header of
:meth:`~hindsight_lg.memory.recall.result.RecallResult.to_prompt`, then a
``<memories>`` block with one JSON object a line. Stored text inside a row is
inert (one line, nothing invisible, ``<``/``>``/``&`` escaped, see
:func:`hindsight_lg._text.inert`); strings that must come back exactly (a
store key, a namespace label) are kept whole and written with JSON escapes
for ``<``, ``>`` and invisible characters, which a JSON reader undoes and
which close no tag for a model.

:func:`fenced_store_tool` gives tools of other libraries that answer LangGraph
store items (LangMem's ``create_search_memory_tool`` first) the same fence.
"""

from __future__ import annotations

import functools
import inspect
import json
import unicodedata
from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool, Tool
from langgraph.store.base import Item

from hindsight_lg._text import inert
from hindsight_lg.memory import RECALL_HEADER

# Characters a JSON line writes as \u escapes: tag brackets and whatever a
# reader cannot see (controls, format characters such as bidi overrides).
_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp", "Cn"})


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # a UTF-16 surrogate pair, as JSON spells it
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _line(row: dict[str, Any]) -> str:
    text = json.dumps(row, ensure_ascii=False)
    return "".join(
        _escape(c) if c in "<>" or unicodedata.category(c) in _HIDDEN else c
        for c in text
    )


def fenced(rows: list[dict[str, Any]]) -> str:
    """Search rows as a model reads them: the data label, then one JSON line each.

    The label and the ``<memories>`` block are those of
    :meth:`~hindsight_lg.memory.recall.result.RecallResult.to_prompt`: the
    rows are data from past conversations, never instructions.
    """
    lines = "\n".join(_line(row) for row in rows)
    body = f"{lines}\n" if lines else ""
    return f"{RECALL_HEADER}\n<memories>\n{body}</memories>"


def rows_of(answer: str) -> list[dict[str, Any]]:
    """The rows of a :func:`fenced` answer (for tests and callers that parse it)."""
    inside = answer.split("<memories>\n", 1)[-1].rsplit("</memories>", 1)[0]
    return [json.loads(line) for line in inside.splitlines() if line.strip()]


def _inert_value(value: Any) -> Any:
    """An item's value with every string in it (keys too) made inert."""
    if isinstance(value, str):
        return inert(value)
    if isinstance(value, dict):
        return {inert(str(k)): _inert_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_inert_value(v) for v in value]
    return value


def _row(item: Any) -> dict[str, Any]:
    """One store item (an ``Item`` or its ``dict()``) as a fenced row."""
    data = item.dict() if isinstance(item, Item) else item
    if not isinstance(data, dict) or "value" not in data:
        return {"content": _inert_value(data)}
    row = {k: v for k, v in data.items() if k != "value"}
    return {**row, "value": _inert_value(data["value"])}


def store_rows(output: Any) -> list[dict[str, Any]]:
    """The rows of what a store tool answered: items, their dicts, or that as JSON.

    Anything else (an error message, say) becomes one row of inert text.
    """
    if isinstance(output, str):
        try:
            output = json.loads(output)
        except ValueError:
            return [{"content": inert(output)}]
    if isinstance(output, (list, tuple)):
        return [_row(item) for item in output]
    return [_row(output)]


def _fence_answer(answer: Any, with_artifact: bool) -> Any:
    if with_artifact and isinstance(answer, tuple) and len(answer) == 2:
        return fenced(store_rows(answer[0])), answer[1]
    return fenced(store_rows(answer))


def fenced_store_tool(tool: BaseTool) -> BaseTool:
    """A copy of ``tool`` whose answers reach the model fenced as memory.

    For tools that answer LangGraph store items, such as LangMem's
    ``create_search_memory_tool`` over :class:`~hindsight_lg.store.HindsightStore`:
    their raw JSON would hand a model stored text as if it were part of the
    conversation. The copy keeps the tool's name, description, argument
    schema, response format and sync/async bodies; only the answer changes:
    the data label and a ``<memories>`` block, one row ``{namespace, key,
    value, created_at, updated_at, score}`` a line, every string of ``value``
    made inert, key and namespace exact (see :func:`rows_of`). An artifact
    (``response_format="content_and_artifact"``) is passed on untouched.

    Args:
        tool: a ``StructuredTool`` or ``Tool`` (LangMem's tools, ``@tool``
            functions).

    Returns:
        The fenced copy; ``tool`` itself is left as it was.

    Raises:
        TypeError: ``tool`` has no function body to wrap (a ``BaseTool``
            subclass): fence its answer with :func:`fenced` and
            :func:`store_rows` in your own ``_run``.

    Example:
        >>> from langmem import create_search_memory_tool  # doctest: +SKIP
        >>> search = fenced_store_tool(  # doctest: +SKIP
        ...     create_search_memory_tool(("memories", "{langgraph_user_id}"))
        ... )
    """
    if not isinstance(tool, (StructuredTool, Tool)):
        raise TypeError(
            f"fenced_store_tool wraps a StructuredTool or Tool, not "
            f"{type(tool).__name__}: fence its answer with fenced(store_rows(...))"
        )
    artifact = tool.response_format == "content_and_artifact"
    update: dict[str, Any] = {}
    if tool.func is not None:
        update["func"] = _fenced_sync(tool.func, artifact)
    if tool.coroutine is not None:
        update["coroutine"] = _fenced_async(tool.coroutine, artifact)
    return tool.model_copy(update=update)


def _fenced_sync(func: Callable[..., Any], artifact: bool) -> Callable[..., Any]:
    # functools.wraps keeps the signature (inspect follows __wrapped__), so
    # the tool still injects the config or callbacks the body asks for.
    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        return _fence_answer(func(*args, **kwargs), artifact)

    return run


def _fenced_async(func: Callable[..., Any], artifact: bool) -> Callable[..., Any]:
    @functools.wraps(func)
    async def run(*args: Any, **kwargs: Any) -> Any:
        answer = func(*args, **kwargs)
        if inspect.isawaitable(answer):
            answer = await answer
        return _fence_answer(answer, artifact)

    return run
