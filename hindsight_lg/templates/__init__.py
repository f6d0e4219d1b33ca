"""Chatbot templates: a personal assistant, a customer-support bot, a team.

They ship inside the package so ``hindsight-lg demo --template ...`` works from
a pip install; ``examples/*.py`` in the repository are runnable scripts that
call them. Each module has ``build(memory, model)``, ``run(memory, model,
out=print)`` and ``main()``; ``customer_support`` also ``offline_model()``.
Offline they use :class:`~hindsight_lg.chat.FakeToolChatModel`; set
``HINDSIGHT_CHAT_MODEL`` to an ``init_chat_model`` name for a real model.
"""

from __future__ import annotations

import importlib
from types import ModuleType

TEMPLATES = {
    "assistant": "personal_assistant",
    "support": "customer_support",
    "team": "team",
}


def load(name: str) -> ModuleType:
    """The template module called ``name`` (see :data:`TEMPLATES`).

    Raises:
        ValueError: unknown template name.
        ImportError: ``support`` without the ``agents`` extra.
    """
    if name not in TEMPLATES:
        raise ValueError(f"unknown template {name!r}; choose from {sorted(TEMPLATES)}")
    return importlib.import_module(f"{__name__}.{TEMPLATES[name]}")


__all__ = ["TEMPLATES", "load"]
