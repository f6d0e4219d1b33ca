"""Fixtures of the panel tests: a seeded memory and a test client on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient

from hindsight_lg import HindsightMemory, Kind, Status
from hindsight_lg.panel import create_app
from hindsight_lg.testing import FrozenClock, HashingEmbedder, InMemoryBackend

XSS = [
    "<script>window.__pwned = 'script'</script>",
    "<img src=x onerror=\"window.__pwned = 'img'\">",
    '"><svg onload="window.__pwned = \'svg\'">',
]


@dataclass
class Seeded:
    """Ids of the seeded memories, by role."""

    namespace: str
    other: str
    wrong: str
    doomed: str
    archived: str
    lesson: str
    foreign: str
    xss: list[str]


def seed(memory: HindsightMemory, namespace: str = "maya") -> Seeded:
    """Fill a memory with a small, varied namespace and a second tenant."""
    memory.capture(
        "I'm Maya, a backend engineer at Lumen Labs in Berlin.",
        namespace=namespace,
        speaker="Maya",
        thread_id="t-1",
        source_ids=["m-1"],
    )
    memory.capture(
        "I love hiking in the Harz mountains on weekends.",
        namespace=namespace,
        speaker="Maya",
        thread_id="t-2",
        source_ids=["m-7"],
    )
    wrong = memory.remember(
        "Maya's sister Lena is getting married in Porto",
        namespace=namespace,
        kind=Kind.FACT,
        entities=["Lena"],
    )
    doomed = memory.remember(
        "Maya's office door code is 4411", namespace=namespace, kind=Kind.FACT
    )
    archived = memory.remember(
        "Maya wanted weekly summaries on Fridays", namespace=namespace, kind=Kind.TASK
    )
    memory.update(namespace, archived.id, status=Status.ARCHIVED)
    memory.remember(
        "Always answer Maya in short bullet points", namespace=namespace, kind=Kind.RULE
    )
    lesson = memory.remember(
        "For travel questions, check the family calendar before answering",
        namespace=namespace,
        kind=Kind.EXPERIENCE,
        confidence=0.6,
        meta={"verified": False, "origin": "reflection"},
    )
    xss = [memory.remember(p, namespace=namespace).id for p in XSS]
    foreign = memory.remember("Bob's bank PIN is 9999", namespace="bob")
    return Seeded(
        namespace, "bob", wrong.id, doomed.id, archived.id, lesson.id, foreign.id, xss
    )


@pytest.fixture
def memory() -> Iterator[HindsightMemory]:
    """A fresh in-memory engine with the hashing embedder and a frozen clock."""
    with HindsightMemory(
        InMemoryBackend(), HashingEmbedder(), clock=FrozenClock()
    ) as engine:
        yield engine


@pytest.fixture
def seeded(memory: HindsightMemory) -> Seeded:
    """The seeded namespaces."""
    return seed(memory)


@pytest.fixture
def client(memory: HindsightMemory, seeded: Seeded) -> Iterator[TestClient]:
    """A client of the unrestricted, token-less panel, addressed to 127.0.0.1."""
    with TestClient(create_app(memory), base_url="http://127.0.0.1:8765") as c:
        yield c


def csrf_of(client: TestClient) -> str:
    """The panel's CSRF token, as its pages and ``/api/session`` hand it out."""
    return str(client.get("/api/session").json()["csrf_token"])
