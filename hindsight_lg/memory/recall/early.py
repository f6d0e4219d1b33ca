"""What a recall has found by its deadline: its dense hits, when it has them.

A recall past its deadline used to return nothing. On a Milvus server the
usual cause is a tenant the read cache must load first (evicted, or never
read by this replica): the load reads the tenant's every record, while the
dense search, which the server answers, runs beside it and is often back in
a few milliseconds. :class:`Early` holds that search for the caller of the
deadline, and :meth:`Early.result` turns its hits, if the search is done,
into a result: scored, held to the relevance rule and assembled within the
budget as any recall is, from the dense path alone. The full recall goes on
in the background, unseen, and loads the tenant for the next one.

Guarantees: only memories the dense search returned, each active; a
server's hits are the server's own records (an uncached tenant is searched
in full), a cached tenant's are the cache's after its write-stamps check,
so nothing another replica forgot comes back. Cost: nothing unless the
deadline passes; then one scoring and assembly of at most
``candidates_per_path`` hits on the caller's thread (about a millisecond).
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from hindsight_lg.backends.base import Hit
from hindsight_lg.memory._pending import Pending
from hindsight_lg.memory.recall.result import RecallResult
from hindsight_lg.model import Status

if TYPE_CHECKING:
    from hindsight_lg.memory.recall.paths import RecallContext
    from hindsight_lg.memory.recall.search import Searcher


class Early:
    """A recall's dense search, kept for the deadline of whoever waits on it.

    Example:
        >>> Early().result() is None  # no dense search started yet
        True
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._search: tuple[Searcher, RecallContext, Pending[list[Hit]]] | None = None

    def started(
        self, searcher: Searcher, ctx: RecallContext, dense: Pending[list[Hit]]
    ) -> None:
        """The recall started its dense search (on the search pool)."""
        with self._lock:
            self._search = (searcher, ctx, dense)

    def result(self) -> RecallResult | None:
        """The dense hits as a result, or None while the search is not done."""
        with self._lock:
            search = self._search
        if search is None:
            return None
        searcher, ctx, dense = search
        hits = dense.done_result()
        if hits is None:
            return None
        # Copies: the recall still running owns the records it was handed.
        awake = [
            Hit(h.record.replace(), h.score)
            for h in hits
            if h.record.status is Status.ACTIVE
        ]
        return searcher.first_look(ctx, awake)
