# Sourced by scripts/install-*.sh: installs Debian packages, non-interactively, as root (or with
# sudo), refreshing the package lists only when they offer no candidate for the first package.
#   apt_install <name for messages> <package>...
apt_install() {
  local name=$1
  shift
  as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"; else
      echo "$name: run as root (or install sudo) to install $* with apt-get" >&2
      exit 1
    fi
  }
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "$name: apt-get not found; install $* by other means" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  local candidate
  candidate=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { print $2 }')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
    as_root apt-get update -qq
  fi
  as_root apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}
