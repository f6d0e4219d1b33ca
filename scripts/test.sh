#!/usr/bin/env bash
# Set up (first run only), then lint, type-check and run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/browser.sh  # chromium for tests/panel/test_browser.py
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
.venv/bin/ruff check hindsight_lg tests examples benchmarks
.venv/bin/mypy
exec .venv/bin/python -m pytest -q "$@"
