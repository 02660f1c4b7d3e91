#!/usr/bin/env bash
# Installs pg_auto_failover for PostgreSQL 15 from Debian (npm run cluster, its tests, CI's step),
# unless it is there. Non-interactive; the package lists are refreshed only when they offer none.
set -euo pipefail

PG_AUTOCTL=/usr/bin/pg_autoctl
EXTENSION=/usr/share/postgresql/15/extension/pgautofailover.control
if [ -x "$PG_AUTOCTL" ] && [ -f "$EXTENSION" ]; then
  echo "pg_autoctl: $("$PG_AUTOCTL" --version 2>/dev/null | head -n 1 || echo present)"
  exit 0
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else
    echo "install-cluster: run as root (or install sudo) to install pg_auto_failover with apt-get" >&2
    exit 1
  fi
}

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-cluster: apt-get not found; install pg_auto_failover 2.0 for PostgreSQL 15 by other means" >&2
  exit 1
fi

export DEBIAN_FRONTEND=noninteractive
candidate=$(apt-cache policy postgresql-15-auto-failover 2>/dev/null | awk '/Candidate:/ { print $2 }')
if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
  as_root apt-get update -qq
fi
as_root apt-get install -y -qq --no-install-recommends postgresql-15-auto-failover pg-auto-failover-cli >/dev/null
echo "pg_autoctl: $("$PG_AUTOCTL" --version | head -n 1)"
