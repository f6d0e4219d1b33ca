"""Memory ids as people type them: the whole id, or a unique prefix of it.

Listings print the first 8 of an id's 32 hex characters (``hindsight-lg
list``, ``explain``, ``rollback``), so the operations a person runs on one
memory (correct, restore, roll back, forget, review a lesson) accept what
was printed, as git accepts a short commit hash:

1. an id that names a stored memory is that memory (no scan);
2. otherwise a string of :data:`MIN_PREFIX` to 31 characters names the one
   memory whose id starts with it, among those that are not deleted and
   that ``reader`` (an agent) may see;
3. no such memory raises :class:`UnknownMemory`, several raise
   :class:`AmbiguousMemory`; both messages say what to give instead.

A prefix shorter than :data:`MIN_PREFIX` is never expanded: one or two
characters match a memory by chance, and forgetting one by chance is not
undone. Cost: a miss of the exact lookup reads the namespace's ids once (the
read cache answers it in process; uncached, one filtered query).
"""

from __future__ import annotations

from collections.abc import Sequence

from hindsight_lg.backends.base import MemoryBackend, Where, visible_to
from hindsight_lg.model import Status

#: The fewest characters of an id that are expanded as a prefix (git's rule).
MIN_PREFIX = 4
#: The length of a memory id (``uuid4().hex``): nothing longer is a prefix.
ID_LENGTH = 32
_SCAN = 10**7  # a prefix is matched against every stored id of the namespace
_STORED = tuple(s.value for s in Status if s is not Status.DELETED)
_SHOWN = 5  # ids an ambiguity names


class UnknownMemory(KeyError, ValueError):
    """No memory has this id, nor an id starting with it.

    A ``KeyError``, as an unknown id always was, and a ``ValueError``, as a
    bad argument is.
    """

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class AmbiguousMemory(LookupError, ValueError):
    """Several memories have ids starting with this prefix: give more of it."""


def resolve(
    backend: MemoryBackend, namespace: str, memory_id: str, reader: str | None = None
) -> str:
    """The full id of the memory ``memory_id`` names (see the module docstring).

    Example:
        >>> from hindsight_lg.testing import InMemoryBackend
        >>> from hindsight_lg.model import MemoryRecord
        >>> backend = InMemoryBackend()
        >>> backend.upsert("u", [MemoryRecord("u", "tea", id="3f2a" + "0" * 28)])
        >>> resolve(backend, "u", "3f2a")
        '3f2a0000000000000000000000000000'

    Raises:
        UnknownMemory: no such memory (or one hidden from ``reader``).
        AmbiguousMemory: a prefix of several memories' ids.
    """
    exact = backend.get(namespace, [memory_id])
    if exact and (reader is None or visible_to(exact[0], reader)):
        return memory_id
    found = _one(_stored_ids(backend, namespace, [memory_id], reader), memory_id)
    if found is None:
        raise UnknownMemory(
            f"no memory {memory_id!r} in namespace {namespace!r}: give the id as "
            f"listed (at least {MIN_PREFIX} characters) and check the namespace"
        )
    return found


def resolve_known(
    backend: MemoryBackend, namespace: str, ids: Sequence[str]
) -> list[str]:
    """``ids`` with each unique prefix made whole; unknown ids are kept as given.

    For deleting: forgetting an id that is already gone is not an error (a
    retried erasure must succeed), but a prefix must still name one memory.
    The namespace is read once, whatever the number of prefixes.

    Raises:
        AmbiguousMemory: a prefix of several memories' ids.
    """
    present = {r.id for r in backend.get(namespace, list(ids))}
    missing = [i for i in ids if i not in present]
    stored = _stored_ids(backend, namespace, missing, None)
    return [i if i in present else _one(stored, i) or i for i in ids]


def _stored_ids(
    backend: MemoryBackend,
    namespace: str,
    prefixes: Sequence[str],
    reader: str | None,
) -> list[str]:
    """Every stored id of the namespace, or none when no prefix can expand."""
    if not any(MIN_PREFIX <= len(p) < ID_LENGTH for p in prefixes):
        return []
    where = Where(statuses=_STORED, reader=reader)
    return [r.id for r in backend.query(namespace, where, limit=_SCAN)]


def _one(stored: Sequence[str], prefix: str) -> str | None:
    """The one id of ``stored`` starting with ``prefix``; None for no such id.

    Raises:
        AmbiguousMemory: several ids start with it.
    """
    if not MIN_PREFIX <= len(prefix) < ID_LENGTH:
        return None
    found = [i for i in stored if i.startswith(prefix)]
    if len(found) > 1:
        shown = ", ".join(sorted(i[: len(prefix) + 4] for i in found)[:_SHOWN])
        raise AmbiguousMemory(
            f"{prefix!r} starts {len(found)} memory ids ({shown}...): give more "
            "characters of the id"
        )
    return found[0] if found else None
