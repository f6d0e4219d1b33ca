"""``hindsight-lg panel``: refuses an open host without a token, serves the demo's store."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from hindsight_lg.cli import main


def test_public_host_needs_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Binding anything but loopback without --token or the variable is refused."""
    monkeypatch.delenv("HINDSIGHT_PANEL_TOKEN", raising=False)
    code = main(["panel", "--uri", str(tmp_path / "x.db"), "--host", "0.0.0.0"])
    assert code == 2
    assert "needs a token" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, token: str | None = None) -> tuple[int, str]:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_panel_serves_the_demo_database(tmp_path: Path) -> None:
    """The panel command opens the database the demo wrote and answers with a token."""
    uri = str(tmp_path / "hindsight.db")
    demo = [sys.executable, "-m", "hindsight_lg.cli", "demo", "--uri", uri]
    subprocess.run([*demo, "--embedder", "hashing"], check=True, capture_output=True)
    port, token = _free_port(), "panel-token-123"
    env = {**os.environ, "HINDSIGHT_PANEL_TOKEN": token}
    cmd = [sys.executable, "-m", "hindsight_lg.cli", "panel", "--uri", uri]
    cmd += ["--embedder", "hashing", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            try:
                status, body = _get(base + "/api/namespaces", token)
                break
            except OSError:
                assert time.monotonic() < deadline, "the panel did not start"
                time.sleep(0.2)
        assert status == 200
        assert "demo-user" in [n["namespace"] for n in json.loads(body)["namespaces"]]
        assert _get(base + "/api/namespaces")[0] == 401
        status, page = _get(base + "/memories?namespace=demo-user", token)
        assert status == 200 and "Redis" in page
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_unknown_namespace_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An end-user view of a namespace that holds nothing names the known ones."""
    from hindsight_lg import HindsightMemory

    uri = str(tmp_path / "one.db")
    with HindsightMemory.from_uri(uri, embedder="hashing") as memory:
        memory.remember("Maya likes tea", namespace="maya")
    code = main(["panel", "--uri", uri, "--embedder", "hashing", "-n", "mya"])
    assert code == 1
    assert "'maya'" in capsys.readouterr().err


def test_panel_freezes_what_is_alive_before_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The long-lived panel server calls gc.freeze() once memory is open.

    A full collection would otherwise walk the model's and store's objects
    (about 250 ms) in the middle of requests.
    """
    import gc

    import uvicorn

    frozen: list[int] = []
    monkeypatch.setattr(
        uvicorn, "run", lambda *a, **k: frozen.append(gc.get_freeze_count())
    )
    from hindsight_lg import HindsightMemory

    uri = str(tmp_path / "p.db")
    with HindsightMemory.from_uri(uri, embedder="hashing") as memory:
        memory.capture("I prefer green tea over coffee", namespace="u")
    gc.unfreeze()
    try:
        argv = ["panel", "--uri", uri, "--embedder", "hashing"]
        assert 0 == main(argv)
    finally:
        gc.unfreeze()
    assert len(frozen) == 1 and frozen[0] > 0
