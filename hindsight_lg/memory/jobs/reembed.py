"""Re-embed a store with another embedding model and switch to it atomically.

The copy itself belongs to the Milvus backend
(:mod:`hindsight_lg.backends.milvus.generations`); this module supplies the
new vectors, blended with each event's turn context the way capture does,
with the store's own policy.

Stop writers while it runs: captures written to the old collections after a
namespace was copied are not in the new ones, and processes that already have
the store open keep using the old collections until they reopen it. A failed
run drops its new collections; a killed one is resumed by the next run to the
same model (see :mod:`hindsight_lg.backends.milvus.generations`).

Example:
    >>> report = reembed("./hindsight.db", to=HashingEmbedder(128))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hindsight_lg.backends import CopyReport as ReembedReport
from hindsight_lg.backends import copy_generation
from hindsight_lg.embeddings.base import Embedder
from hindsight_lg.memory.capture.vectors import context_vectors
from hindsight_lg.memory.policy import Policy
from hindsight_lg.model import MemoryRecord


def reembed(
    uri: str,
    *,
    to: Embedder,
    policy: Policy | None = None,
    token: str = "",
    prefix: str = "hindsight",
    progress: Callable[[int, int], None] | None = None,
) -> ReembedReport:
    """Copy the store at ``uri`` into new collections embedded by ``to``, then switch.

    Args:
        uri: the Milvus Lite file or server the store lives in.
        to: the new embedder.
        policy: the store's policy (its ``context_weight`` blends each event
            with its turn, as capture did); the default policy when ``None``.
        token: server credentials.
        prefix: the store's collection prefix (as given to ``from_uri``).
        progress: called with (namespaces done, namespaces) after each one.

    Raises:
        ValueError: no store under ``prefix`` at ``uri``.
        RuntimeError: a copied namespace's count differs (nothing switched,
            the new collections dropped).
        StoreError: the store failed (nothing switched, new collections dropped).
    """
    weight = (policy or Policy()).context_weight

    def revector(batch: Sequence[MemoryRecord]) -> None:
        vectors = context_vectors(to, batch, weight)
        for record, vector in zip(batch, vectors, strict=True):
            record.dense = vector

    return copy_generation(
        uri,
        dim=to.dim,
        model_id=to.model_id,
        revector=revector,
        token=token,
        prefix=prefix,
        progress=progress,
    )
