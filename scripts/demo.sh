#!/usr/bin/env bash
# demo.sh — README command 1: installs what is missing, builds, writes a
# sample JAX-style profile directory with the project's generator, and
# starts the viewer on it. Extra arguments go to xprof-view (e.g. --port=N).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)"

demo=${XPV_DEMO_DIR:-${TMPDIR:-/tmp}/xprof-view-demo}
if [ ! -d "$demo/profiles" ]; then
  ./build/xpv-gen --out "$demo/profiles/demo" --runs 2 --hosts 2 --steps 12 --size 20MB
fi
echo "xprof-view: sample profiles in $demo/profiles/demo"
exec ./build/xprof-view --profile-dir="$demo/profiles/demo" "$@"
