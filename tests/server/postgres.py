"""A throwaway PostgreSQL server for the bridge's Postgres tests.

Debian's ``postgresql`` package (``.ci/run`` installs it when missing) puts its
programs in ``/usr/lib/postgresql/<version>/bin``, off ``PATH``. The server
runs from a temporary folder on a free port of 127.0.0.1 with ``trust``
authentication, as the ``postgres`` user when the tests run as root (the
server refuses to run as root), and is stopped with ``pg_ctl stop -m fast``.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _bin(program: str) -> str:
    found = shutil.which(program) or next(
        iter(sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{program}"), reverse=True)),
        None,
    )
    if found is None:
        pytest.fail(
            f"{program} not found: apt-get install postgresql (Debian), as .ci/run does"
        )
    return found


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_owner(argv: list[str]) -> list[str]:
    """``argv`` run as ``postgres`` when we are root (initdb refuses root)."""
    if os.geteuid() != 0:
        return argv
    return ["runuser", "-u", "postgres", "--", *argv]


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start PostgreSQL in a temporary folder; yield its connection string."""
    folder = Path(tempfile.mkdtemp(prefix="hindsight-pg-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
    data, port = folder / "data", _free_port()
    run = {"check": True, "capture_output": True, "timeout": 120}
    subprocess.run(
        _as_owner([_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres"]),
        **run,  # type: ignore[call-overload]
    )
    options = f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off"
    pg_ctl = _bin("pg_ctl")
    log = folder / "server.log"
    start = [pg_ctl, "-D", str(data), "-l", str(log), "-o", options, "-w", "start"]
    try:
        subprocess.run(_as_owner(start), **run)  # type: ignore[call-overload]
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres?sslmode=disable"
    finally:
        stop = [pg_ctl, "-D", str(data), "-m", "fast", "-w", "stop"]
        subprocess.run(_as_owner(stop), check=False, capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
