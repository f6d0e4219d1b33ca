"""Jobs: work on the whole engine, typed against one engine protocol.

``reflect`` writes hindsight lessons after a run, ``erasure`` forgets a whole
namespace and verifies it, ``portability`` exports and imports a namespace and
``reembed`` moves a store to a new embedder.
"""

from __future__ import annotations
