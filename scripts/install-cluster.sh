#!/usr/bin/env bash
# Installs pg_auto_failover for PostgreSQL 15 from Debian (npm run cluster, its tests, CI's step),
# unless it is there.
set -euo pipefail
source "$(dirname "$0")/lib/apt-install.sh"

PG_AUTOCTL=/usr/bin/pg_autoctl
EXTENSION=/usr/share/postgresql/15/extension/pgautofailover.control
if [ -x "$PG_AUTOCTL" ] && [ -f "$EXTENSION" ]; then
  echo "pg_autoctl: $("$PG_AUTOCTL" --version 2>/dev/null | head -n 1 || echo present)"
  exit 0
fi
apt_install install-cluster postgresql-15-auto-failover pg-auto-failover-cli
echo "pg_autoctl: $("$PG_AUTOCTL" --version | head -n 1)"
