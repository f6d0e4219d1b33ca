"""Transfer: export and import (``portability``), and re-embedding (``reembed``)."""

from __future__ import annotations
