#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages xprof-view needs to build,
# test and benchmark, when any is missing: with apt-get as root, with sudo
# otherwise, or prints the exact command when neither is possible.
# usage: scripts/install-deps.sh [build|test|bench|fuzz]   (default: build)
set -euo pipefail

what=${1:-build}
pkgs=(build-essential cmake pkg-config libmicrohttpd-dev libsqlite3-dev zlib1g-dev libzstd-dev
      libcjson-dev libcunit1-dev libdeflate-dev libisal-dev)
case "$what" in
  test)  pkgs+=(python3 nodejs npm chromium clang-format) ;;
  bench) pkgs+=(python3 nodejs npm chromium clang-format wrk nginx-light libyajl-dev time zstd) ;;
  fuzz)  pkgs+=(python3 clang) ;;
esac

# A tool that is already on PATH (node and npm from another source, say)
# counts as present: installing Debian's package over it can conflict.
provides() {
  case "$1" in
    nodejs) command -v node >/dev/null ;;
    npm) command -v npm >/dev/null ;;
    chromium) command -v chromium >/dev/null ;;
    python3) command -v python3 >/dev/null && python3 -c 'import sqlite3, gzip, json' 2>/dev/null ;;
    wrk|nginx-light) command -v "${1%-light}" >/dev/null ;;
    time) [ -x /usr/bin/time ] ;;
    zstd) command -v zstd >/dev/null ;;
    clang) command -v clang >/dev/null ;;
    *) return 1 ;;
  esac
}

missing=()
for p in "${pkgs[@]}"; do
  provides "$p" && continue
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends ${missing[*]}"
echo "xprof-view: installing missing packages: ${missing[*]}" >&2
if [ "$(id -u)" = 0 ]; then
  sh -c "$cmd"
elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
  sudo sh -c "$cmd"
else
  echo "xprof-view: cannot install packages (not root, no sudo). Run as root:" >&2
  echo "  $cmd" >&2
  exit 1
fi
