#!/usr/bin/env bash
# install-deps.sh — installs the Debian packages xprof-view needs to build,
# test and benchmark, when any is missing: with apt-get as root, with sudo
# otherwise, or prints the exact command when neither is possible.
# usage: scripts/install-deps.sh [build|test|bench]   (default: build)
set -euo pipefail

what=${1:-build}
pkgs=(build-essential cmake pkg-config libmicrohttpd-dev libsqlite3-dev zlib1g-dev
      libcjson-dev libcunit1-dev)
case "$what" in
  test)  pkgs+=(python3 nodejs npm chromium) ;;
  bench) pkgs+=(python3 nodejs npm chromium wrk nginx-light libyajl-dev time) ;;
esac

missing=()
for p in "${pkgs[@]}"; do
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
