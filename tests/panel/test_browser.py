"""The panel in a real browser: headless Chromium over a seeded Milvus Lite store.

The store is the demo's database (``hindsight-lg demo``) plus a few memories
the panel's actions need. The panel runs in this process under uvicorn, so the
test can check the engine after each click. Set
``HINDSIGHT_PANEL_SCREENSHOTS=<dir>`` to save the namespace view and a
memory's page there (the documentation's screenshots come from this run).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hindsight_lg import HindsightMemory, Status
from hindsight_lg.cli import main
from tests.panel.conftest import XSS, Seeded, seed

playwright = pytest.importorskip("playwright.sync_api")
uvicorn = pytest.importorskip("uvicorn")

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# CI installs chromium (scripts/browser.sh): there a missing browser fails.
pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM) and not os.environ.get("CI"),
    reason="needs Debian's chromium (scripts/browser.sh installs it)",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HindsightMemory]:
    """The demo's database, opened again and seeded for the panel's actions."""
    uri = str(tmp_path_factory.mktemp("panel") / "hindsight.db")
    assert main(["demo", "--uri", uri, "--embedder", "hashing"]) == 0
    memory = HindsightMemory.from_uri(uri, embedder="hashing")
    yield memory
    memory.close()


@pytest.fixture(scope="module")
def seeded(store: HindsightMemory) -> Seeded:
    """The seeded memories (namespace ``maya``) beside the demo's ``demo-user``."""
    return seed(store)


@pytest.fixture(scope="module")
def base_url(store: HindsightMemory, seeded: Seeded) -> Iterator[str]:
    """The panel served by uvicorn on a free loopback port."""
    from hindsight_lg.panel import create_app

    port = _free_port()
    config = uvicorn.Config(
        create_app(store), host="127.0.0.1", port=port, log_level="warning"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the panel did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def page(base_url: str) -> Iterator[Any]:
    """One Chromium page for the whole module; dialogs (alerts) are recorded."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page(viewport={"width": 1280, "height": 900})
        tab.dialogs = []
        tab.on("dialog", lambda d: (tab.dialogs.append(d.message), d.dismiss()))
        yield tab
        browser.close()


def _no_script_ran(page: Any) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.dialogs == []


def _shot(page: Any, name: str) -> None:
    folder = os.environ.get("HINDSIGHT_PANEL_SCREENSHOTS")
    if folder:
        page.screenshot(path=str(Path(folder) / name), full_page=True)


def _open(page: Any, base_url: str, text: str) -> None:
    """From the maya namespace page (all statuses), open the memory showing ``text``."""
    page.goto(f"{base_url}/memories?namespace=maya&status=all")
    page.get_by_role("link", name=text).first.click()


def test_panel_in_a_browser(
    page: Any, base_url: str, store: HindsightMemory, seeded: Seeded
) -> None:
    """Browse, correct, delete, restore and confirm in Chromium; no stored script runs."""
    page.goto(base_url + "/")
    assert page.get_by_role("link", name="demo-user").is_visible()
    page.get_by_role("link", name="demo-user").click()
    kinds = page.locator("section.card h2").all_inner_texts()
    assert any(k.startswith("Preference") for k in kinds)
    assert any(k.startswith("Task") for k in kinds)
    _shot(page, "panel-namespace.png")
    page.locator("td.content a").first.click()
    assert page.locator("blockquote.text").is_visible()

    # Escaped text: the payloads show as text and none of them runs.
    page.goto(base_url + "/memories?namespace=maya&kind=fact")
    for payload in XSS:
        assert page.get_by_text(payload, exact=True).count() == 1
    page.get_by_text(XSS[1], exact=True).click()
    assert page.locator("blockquote.text").inner_text() == XSS[1]
    _no_script_ran(page)

    # Correct: the old memory becomes history and recall returns the correction.
    _open(page, base_url, "Maya's sister Lena is getting married in Porto")
    page.fill("textarea[name=text]", "Maya's sister Lena is getting married in Lisbon")
    page.get_by_role("button", name="Save correction").click()
    assert "Memory corrected." in page.locator(".flash").inner_text()
    assert "Lisbon" in page.locator("blockquote.text").inner_text()
    _shot(page, "panel-memory.png")
    page.locator("table.edges a").first.click()
    assert page.locator(".badge.superseded").first.is_visible()
    assert "Superseded by" in page.locator(".notice").inner_text()
    old = store.get("maya", seeded.wrong)
    assert old is not None and old.status is Status.SUPERSEDED
    recalled = store.recall("Lena married", namespace="maya", timeout=None)
    assert old.superseded_by in recalled.ids and seeded.wrong not in recalled.ids

    # Search runs recall and shows per-path scores.
    page.fill("header input[name=q]", "Lena married Lisbon")
    page.press("header input[name=q]", "Enter")
    first = page.locator("table.results tbody tr").first
    assert "Lisbon" in first.inner_text() and "dense" in first.inner_text()

    # Delete, with a confirmation step: gone from recall and from the list.
    _open(page, base_url, "Maya's office door code is 4411")
    page.get_by_role("link", name="Delete…").click()
    page.get_by_role("button", name="Delete forever").click()
    assert "Memory deleted." in page.locator(".flash").inner_text()
    assert store.get("maya", seeded.doomed) is None
    assert seeded.doomed not in [
        r.id for r in store.list_memories("maya", history=True)
    ]
    found = store.recall("office door code", namespace="maya", timeout=None)
    assert seeded.doomed not in found.ids

    # Restore an archived memory, found through the status filter.
    page.goto(base_url + "/memories?namespace=maya")
    page.select_option("select[name=status]", "archived")
    page.get_by_role("button", name="Filter").click()
    page.get_by_role("link", name="Maya wanted weekly summaries on Fridays").click()
    page.get_by_role("button", name="Restore to active").click()
    assert "Memory restored." in page.locator(".flash").inner_text()
    restored = store.get("maya", seeded.archived)
    assert restored is not None and restored.status is Status.ACTIVE

    # Confirm a reflection lesson: it joins recall.
    _open(page, base_url, "For travel questions, check the family calendar")
    page.get_by_role("button", name="Confirm lesson").click()
    assert page.locator(".tag.ok").inner_text() == "confirmed lesson"
    lessons = store.recall("travel family calendar", namespace="maya", timeout=None)
    assert seeded.lesson in lessons.ids
    _no_script_ran(page)
