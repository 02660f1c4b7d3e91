#!/usr/bin/env bash
# Installs Debian's Chromium for the console's browser tests (test/console/), unless it is there.
set -euo pipefail
source "$(dirname "$0")/lib/apt-install.sh"

BROWSER=/usr/bin/chromium
if [ -x "$BROWSER" ]; then
  echo "chromium: $("$BROWSER" --version 2>/dev/null || echo present)"
  exit 0
fi
apt_install install-browser chromium fonts-dejavu-core
echo "chromium: $("$BROWSER" --version)"
