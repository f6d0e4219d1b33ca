#!/usr/bin/env bash
# Set up (first run only) and run the demo: a scripted conversation captured
# into ./hindsight.db, then questions answered from recalled memories.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/hindsight-lg demo "$@"
