"""A call started on another thread, or deferred to when its result is asked."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Pending(Generic[T]):
    """The result of ``call(*args)``: a future's, or the call's made on asking.

    Lets code start work beside itself when a pool is at hand and read it the
    same way when there is none.

    Example:
        >>> Pending(None, max, (2, 3)).result()
        3
    """

    __slots__ = ("_future", "_call", "_args")

    def __init__(
        self, future: Future[T] | None, call: Callable[..., T], args: tuple[Any, ...]
    ) -> None:
        self._future = future
        self._call = call
        self._args = args

    def done_result(self) -> T | None:
        """The result if the call is done and did not raise, else None; never waits."""
        future = self._future
        if future is None or not future.done() or future.exception() is not None:
            return None
        return future.result()

    def result(self) -> T:
        """The call's result (waiting for it), or its exception raised here."""
        if self._future is None:
            return self._call(*self._args)
        return self._future.result()
