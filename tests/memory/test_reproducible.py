"""Recall is reproducible: the same turns in the same order recall the same."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("_reproducible_run.py")


def _recalls(order: str, hash_seed: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, str(CHILD), order],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
    )
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def test_two_fresh_stores_fed_the_same_chat_recall_alike() -> None:
    """Other ids (counting up, then down) and another hash seed change no recall."""
    first, second = _recalls("up", "1"), _recalls("down", "2")
    assert sum(map(len, first.values())) >= len(first)  # something was recalled
    assert first == second
