#!/usr/bin/env bash
# Install Debian's chromium for the panel's browser test, when it is missing.
# Playwright drives it through executable_path (its own browser download
# cannot run on these machines). Needs root or passwordless sudo.
set -euo pipefail
if command -v chromium >/dev/null 2>&1; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "browser.sh: chromium missing and not root: the browser test will be skipped" >&2
    exit 0
  fi
  SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
