#!/usr/bin/env bash
# Installs Debian's Chromium for the console's browser tests (test/console/), unless it is there.
# Non-interactive; the package lists are refreshed only when they offer no chromium.
set -euo pipefail

BROWSER=/usr/bin/chromium
if [ -x "$BROWSER" ]; then
  echo "chromium: $("$BROWSER" --version 2>/dev/null || echo present)"
  exit 0
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    echo "install-browser: run as root (or install sudo) to install chromium with apt-get" >&2
    exit 1
  fi
}

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: apt-get not found; install Chromium at $BROWSER by other means" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
candidate=$(apt-cache policy chromium 2>/dev/null | awk '/Candidate:/ { print $2 }')
if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
  as_root apt-get update -qq
fi
as_root apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "chromium: $("$BROWSER" --version)"
