"""Keep pymilvus and Milvus Lite's harmless noise out of the application's logs.

Three records reach a user's logs on every run, none of which they can act on:

- pymilvus's query and search iterators warn ``failed to get mvccTs from
  milvus server, use client-side ts instead`` on every paged query against
  Milvus Lite, which has no MVCC timestamps; the fallback is the documented
  behaviour.
- Milvus Lite's gRPC servicer leaves ``AllocTimestamp`` unimplemented, so
  ``grpc._server`` logs ``Exception calling application: Method not
  implemented!`` with a traceback when pymilvus asks (the client then falls
  back, as above). It shows once ``logging.basicConfig`` is called.
- ``milvus_lite.server_manager`` logs a 20-line traceback when another
  process holds the Lite file; :class:`MilvusBackend` raises ``StoreLocked``
  with a message saying what to do, so the traceback only repeats it.

The library configures nothing global: this module adds one filter to each of
those named loggers, matching only those records (by message and, for the two
tracebacks, by the exception's origin). Every other record of those loggers,
and every other logger, is untouched. Filters on a logger, unlike its level
and handlers, survive pymilvus's own ``dictConfig`` at import.
"""

from __future__ import annotations

import logging
import traceback
from types import TracebackType

_ITERATOR_LOGGERS = (
    "pymilvus.client.iterator.query_iterator",
    "pymilvus.client.iterator.search_iterator",
)
_GRPC_LOGGER = "grpc._server"
_LITE_LOGGER = "milvus_lite.server_manager"


def _raised_in(tb: TracebackType | None, fragment: str) -> bool:
    """True when the innermost frame of ``tb`` is in a file whose path has ``fragment``."""
    frames = traceback.extract_tb(tb) if tb is not None else []
    return bool(frames) and fragment in frames[-1].filename


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen and len(seen) < 20:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def mvcc_fallback(record: logging.LogRecord) -> bool:
    """False (drop) for the iterators' ``mvccTs`` fallback warning."""
    return not (record.levelno == logging.WARNING and "mvccTs" in str(record.msg))


def lite_unimplemented(record: logging.LogRecord) -> bool:
    """False (drop) for Milvus Lite's unimplemented RPCs logged by ``grpc._server``."""
    exc = record.exc_info[1] if record.exc_info else None
    return not (
        isinstance(exc, NotImplementedError)
        and str(record.msg).startswith("Exception calling application")
        and _raised_in(exc.__traceback__, "milvus")
    )


def lite_locked(record: logging.LogRecord) -> bool:
    """False (drop) for the lock traceback ``StoreLocked`` already explains."""
    exc = record.exc_info[1] if record.exc_info else None
    return not any(type(e).__name__ == "DataDirLockedError" for e in _chain(exc))


_FILTERS = {
    **{name: mvcc_fallback for name in _ITERATOR_LOGGERS},
    _GRPC_LOGGER: lite_unimplemented,
    _LITE_LOGGER: lite_locked,
}


def install() -> None:
    """Add each filter to its logger, once (idempotent)."""
    for name, check in _FILTERS.items():
        logger = logging.getLogger(name)
        if check not in logger.filters:
            logger.addFilter(check)
