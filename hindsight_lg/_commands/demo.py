"""``demo``: a scripted multi-session conversation, then questions answered from memory."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import Any

from hindsight_lg._commands import add_store_args, open_memory, positive_int
from hindsight_lg.templates import TEMPLATES

NAMESPACE = "demo-user"
DEFAULT_URI = "./hindsight.db"
SESSIONS: list[tuple[str, list[str]]] = [
    (
        "2026-03-02T09:00",
        [
            "Hi! I'm Maya, I work as a backend engineer at Lumen Labs in Berlin.",
            "I don't like Redis for caching, it bit us in production last year.",
            "My sister Lena is getting married in Lisbon in June, so I need to book flights.",
            "ok thanks!",
        ],
    ),
    (
        "2026-03-09T18:30",
        [
            "I love hiking in the Harz mountains on weekends.",
            "From now on, always answer me in short bullet points.",
            "帮我查一下上海明天的天气，另外我下周三要去上海出差，记得提醒我带伞",
        ],
    ),
    (
        "2026-03-20T08:15",
        [
            "Actually Redis is fine for caching now, we moved to a managed cluster.",
            "I'm feeling stressed about the Lumen Labs launch next week.",
            "Remind me to buy a gift for Lena before the wedding.",
        ],
    ),
]
QUESTIONS = [
    "What does Maya think about Redis for caching?",
    "What should I remember about Lena?",
    "How should answers be formatted?",
    "上海出差需要准备什么？",
    "Where does Maya work?",
]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the demo command."""
    p = sub.add_parser(
        "demo", help="capture a scripted conversation, then recall from it"
    )
    add_store_args(p, namespace=False)
    # The scripted demo writes ./hindsight.db (for recall/list to read after);
    # a template runs on a fresh store unless --uri names one to keep.
    p.set_defaults(uri=None)
    p.add_argument(
        "--budget", type=positive_int, default=300, help="token budget per question"
    )
    p.add_argument(
        "--template",
        choices=sorted(TEMPLATES),
        help="run a chatbot template from hindsight_lg.templates instead (offline unless "
        "HINDSIGHT_CHAT_MODEL names an init_chat_model model)",
    )
    p.set_defaults(func=cmd_demo)


def _load_template(name: str) -> Any:
    """Import the template module shipped in ``hindsight_lg.templates``."""
    from hindsight_lg.templates import load

    return load(name)


def cmd_template(args: argparse.Namespace) -> int:
    """Run one chatbot template against the memory the options describe."""
    import os

    module = _load_template(args.template)
    real = os.environ.get("HINDSIGHT_CHAT_MODEL")
    offline = getattr(module, "offline_model", None)
    model = module.chat_model() if real or offline is None else offline()
    # A fresh store per run unless --uri names one to keep: a second run must
    # not answer from the first one's memories.
    fresh = args.uri is None
    args.uri = ":memory:" if fresh else args.uri
    where = (
        "in memory, fresh for this run (--uri FILE keeps one)" if fresh else args.uri
    )
    with open_memory(args, create=True) as memory:
        print(f"template: {args.template}  memory: {where}")
        module.run(memory, model)
    return 0


def _ts(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def cmd_demo(args: argparse.Namespace) -> int:
    """Run the scripted conversation and print recalled memories with scores."""
    if getattr(args, "template", None):
        return cmd_template(args)
    args.uri = args.uri or DEFAULT_URI
    with open_memory(
        args, create=True, clock=lambda: _ts("2026-03-21T10:00")
    ) as memory:
        print(
            f"memory: {args.uri}  embedder: {memory.embedder.model_id}  "
            f"backend: {memory.backend.capabilities.name}"
        )
        memory.forget(NAMESPACE)
        for i, (when, turns) in enumerate(SESSIONS, 1):
            print(f"\n== session {i} ({when}) ==")
            for j, text in enumerate(turns):
                records = memory.capture(
                    text,
                    namespace=NAMESPACE,
                    speaker="Maya",
                    thread_id=f"session-{i}",
                    event_time=_ts(when),
                    source_ids=[f"s{i}:{j}"],
                )
                kinds = ", ".join(f"{r.kind.value}" for r in records) or "not kept"
                print(f"  user: {text}\n        -> {kinds}")
        history = memory.list_memories(NAMESPACE, history=True)
        superseded = [r for r in history if r.status.value == "superseded"]
        print(f"\n{len(history)} memories, {len(superseded)} superseded:")
        for r in superseded:
            print(f"  superseded: {r.content}")
        for question in QUESTIONS:
            result = memory.recall(
                question, namespace=NAMESPACE, budget_tokens=args.budget, timeout=None
            )
            print(f"\n? {question}")
            for m in result.memories[:4]:
                print(f"  {m.score:.3f}  {m.record.content}")
                for text in m.describe():
                    print(f"         {text}")
    return 0
