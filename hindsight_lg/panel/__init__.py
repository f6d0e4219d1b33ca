"""The memory panel: see, correct and delete what an agent remembers, in a browser.

``create_app(memory)`` returns an ASGI app (Starlette) with server-rendered
pages and a JSON API under ``/api/``; ``hindsight-lg panel`` serves it with
uvicorn. Needs the ``panel`` extra: ``pip install 'hindsight-lg[panel]'``.
See ``docs/panel.md``.
"""

from __future__ import annotations

try:
    import jinja2  # noqa: F401
    import starlette  # noqa: F401
except ImportError:  # pragma: no cover - depends on the installed extras
    raise ImportError("pip install 'hindsight-lg[panel]'") from None

from hindsight_lg.panel.app import create_app

__all__ = ["create_app"]
