#!/usr/bin/env bash
# Install Debian's chromium for the panel's browser test, when it is missing,
# and a Chinese font so the panel's Chinese memories render (not as boxes).
# Playwright drives it through executable_path (its own browser download
# cannot run on these machines). Needs root or passwordless sudo.
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if ! fc-list :lang=zh 2>/dev/null | grep -q .; then
  missing+=(fonts-wqy-microhei)
fi
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "browser.sh: ${missing[*]} missing and not root: the browser test may be skipped" >&2
    exit 0
  fi
  SUDO="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
