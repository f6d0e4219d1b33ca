"""Embed concurrent recalls' queries in one model call.

Eight turns recalling at once each embed one short query. Run one by one on
a transformer they cost eight forward passes (MiniLM on one CPU thread: about
17 ms each, 135 ms in all); as one batch of eight, about 35 ms. Under load,
that difference is what pushes the last turns past the recall deadline.

Algorithm (no timer, so a lone call pays nothing): a caller appends its texts
to a queue; if no batch is running it becomes the leader, takes everything
queued, embeds it in one call and hands each caller its rows. Callers that
arrive while a batch runs wait for it to end; the next leader then takes all of
them at once. Errors reach every caller of the failed batch.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hindsight_lg.embeddings.base import Embedder, Vectors


@dataclass(slots=True)
class _Request:
    texts: list[str]
    vectors: Vectors | None = None
    error: BaseException | None = None
    done: bool = False


class CoalescingEmbedder:
    """An :class:`Embedder` that batches calls made at the same time.

    Args:
        inner: the model that does the embedding.
    """

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.dim = inner.dim
        self.model_id = inner.model_id
        self._cv = threading.Condition()
        self._queue: list[_Request] = []
        self._busy = False

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Vectors for ``texts``, computed with whatever else is waiting."""
        request = _Request(list(texts))
        with self._cv:
            self._queue.append(request)
            while self._busy and not request.done:
                self._cv.wait()
            if not request.done:
                self._busy = True
                batch, self._queue = self._queue, []
        if not request.done:
            self._run(batch)
        if request.error is not None:
            raise request.error
        assert request.vectors is not None
        return request.vectors

    def _run(self, batch: list[_Request]) -> None:
        texts = [t for r in batch for t in r.texts]
        try:
            vectors = np.asarray(self.inner.embed(texts)) if texts else None
            start = 0
            for r in batch:
                end = start + len(r.texts)
                r.vectors = (
                    vectors[start:end]
                    if vectors is not None
                    else np.zeros((0, self.dim), dtype=np.float32)
                )
                start = end
        except BaseException as exc:  # every waiter of this batch sees it
            for r in batch:
                r.error = exc
        finally:
            with self._cv:
                for r in batch:
                    r.done = True
                self._busy = False
                self._cv.notify_all()
