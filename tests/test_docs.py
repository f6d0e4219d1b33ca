"""Every Python block in README.md and docs/ runs, page by page, as a reader would.

A page's blocks run in order in one namespace (a later block may use what an
earlier one defined), in a temporary folder, so ``./hindsight.db`` is a fresh
Milvus Lite file. ``HindsightMemory.from_uri`` defaults to the hashing embedder
here to keep the suite fast; ``tests/test_readme.py`` runs the README with the
real default model. Top-level ``await`` is allowed (blocks for notebooks and
async apps).

A block that is not meant to run on its own says so on its first line,
``# fragment: <why>``, and is skipped by that name. Blocks that fail on pages
whose fix is pending are listed in ``PENDING`` with the reason, by name.

Two checks on the pages themselves: none is longer than ``MAX_LINES`` lines
(deep detail moves to a page of its own), and every relative link between
them names a page and a heading it has.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import io
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace

from hindsight_lg import HindsightMemory

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FRAGMENT = "# fragment"
# A docs page a user reads in ten minutes: longer ones split where a topic ends.
MAX_LINES = 400

# Blocks that fail as written, on pages whose owners fix them; each says why.
# None today: add "docs/page.md[index]": "why" while a page waits for its fix.
PENDING: dict[str, str] = {}


def _blocks(page: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def _prose(page: Path) -> str:
    """The page without its code blocks (a ``#`` there is a comment, not a heading)."""
    return re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives the page's headings (a repeated one gets ``-1``, ...)."""
    seen: dict[str, int] = {}
    for line in _prose(page).splitlines():
        heading = re.match(r"#{1,6} +(.*)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower())
            slug = slug.replace(" ", "-")
            seen[slug] = seen.get(slug, 0) + 1
    return {s if n == 0 else f"{s}-{n}" for s, c in seen.items() for n in range(c)}


def _name(page: Path, index: int) -> str:
    return f"{page.relative_to(ROOT)}[{index}]"


def _run(code: str, name: str, namespace: dict[str, Any]) -> None:
    flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    compiled = compile(code, name, "exec", flags=flags)
    result = eval(compiled, namespace)  # our own docs, run as a reader would
    if asyncio.iscoroutine(result):
        asyncio.run(result)


@pytest.fixture
def hashing_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """``from_uri`` without an embedder takes the hashing one (fast, no model)."""
    real = HindsightMemory.from_uri.__func__  # type: ignore[attr-defined]

    def from_uri(cls: Any, uri: str = "./hindsight.db", **kwargs: Any) -> Any:
        kwargs.setdefault("embedder", "hashing")
        return real(cls, uri, **kwargs)

    monkeypatch.setattr(HindsightMemory, "from_uri", classmethod(from_uri))


class _Collector(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that accepts every export (and keeps nothing)."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def contained_tracing(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A page that sets up tracing exports to a local collector and leaves no trace.

    The set-up block of docs/observability.md installs a tracer provider and
    instruments LangChain; run as written it would make the provider global
    for every later test, and its exporter would retry an absent collector at
    exit. Here its provider stays local, exports reach a collector on
    127.0.0.1, and the instrumentation is undone after the page.
    """
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", raising=False)
    monkeypatch.setenv(
        "OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{server.server_port}"
    )
    providers: list[Any] = []
    monkeypatch.setattr(trace, "set_tracer_provider", providers.append)
    try:
        yield
    finally:
        from openinference.instrumentation.langchain import LangChainInstrumentor

        if LangChainInstrumentor().is_instrumented_by_opentelemetry:
            LangChainInstrumentor().uninstrument()
        for provider in providers:
            provider.shutdown()
        server.shutdown()
        server.server_close()


def test_every_page_with_code_is_checked() -> None:
    """README.md and the docs hold Python blocks, and every fragment says why."""
    names = [_name(p, i) for p in PAGES for i, _ in enumerate(_blocks(p))]
    assert len(names) >= 20
    for page in PAGES:
        for block in _blocks(page):
            first = block.lstrip().splitlines()[0] if block.strip() else ""
            if first.startswith(FRAGMENT):
                assert first.startswith(f"{FRAGMENT}: ") and len(first) > 15, first


def test_no_page_is_longer_than_ten_minutes_of_reading() -> None:
    """No docs page is over MAX_LINES lines: deep detail goes to a page of its own."""
    pages = sorted((ROOT / "docs").glob("*.md"))
    lengths = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in pages}
    assert len(lengths) >= 10
    long = {name: n for name, n in lengths.items() if n > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines, split or condense: {long}"


def test_benchmarks_page_stays_a_summary() -> None:
    """docs/benchmarks.md is at most 300 lines; the runs behind it go to HISTORY.md."""
    page = ROOT / "docs" / "benchmarks.md"
    lines = len(page.read_text(encoding="utf-8").splitlines())
    assert lines <= 300, (
        f"docs/benchmarks.md has {lines} lines; move detail to benchmarks/HISTORY.md"
    )
    assert (ROOT / "benchmarks" / "HISTORY.md").exists()


def test_links_between_pages_resolve() -> None:
    """Every relative link of README.md and docs/ names a file, and an anchor it has."""
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", _prose(page)):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists() or (
                anchor and dest.suffix == ".md" and anchor not in _anchors(dest)
            ):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert not broken, broken


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if _blocks(p)], ids=lambda p: p.name)
def test_page_blocks_run(
    page: Path,
    tmp_path: Path,
    hashing_by_default: None,
    contained_tracing: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each block of the page runs after the ones above it; fragments are skipped."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, Any] = {"__name__": "docs"}
    skipped, ran = [], 0
    for index, block in enumerate(_blocks(page)):
        name = _name(page, index)
        if block.lstrip().startswith(FRAGMENT) or name in PENDING:
            skipped.append(name)
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                _run(block, name, namespace)
            except Exception as exc:
                raise AssertionError(f"{name} fails: {exc!r}") from exc
        ran += 1
    for value in namespace.values():
        if isinstance(value, HindsightMemory):
            value.close()
    print(f"{page.name}: ran {ran}, skipped {skipped}")
    assert ran + len(skipped) == len(_blocks(page))
