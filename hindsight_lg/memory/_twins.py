"""Async twins by name: ``aforget = in_thread(forget)``.

A twin is the same call as its sync method, run in a worker thread
(:func:`asyncio.to_thread`, which carries the caller's context, so spans
nest). It keeps the method's typed signature (a ``ParamSpec``), and it calls
the method by name on the instance, so an override or a patched method is
what runs.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar, cast

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def in_thread(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """The async twin of ``method``: the same call, in a worker thread."""
    name = method.__name__

    @functools.wraps(method)
    async def twin(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        sync = cast(Callable[P, R], getattr(self, name))
        return await asyncio.to_thread(sync, *args, **kwargs)

    twin.__name__ = f"a{name}"
    twin.__qualname__ = method.__qualname__.replace(name, f"a{name}")
    twin.__doc__ = f"Async twin of :meth:`{name}` (runs it in a worker thread)."
    return twin
