#!/usr/bin/env bash
# run_timeline_browser.sh — the timeline in headless Chromium on a ~10 M-event
# profile: first paint, the p50/p95 of 100 scripted zoom, pan, select and
# area-select interactions (input to next frame, and input to settled), and
# the JS heap (bench/timeline_browser.mjs). Targets (issue 21): first paint
# < 1 s, p95 < 100 ms, heap < 300 MB. Figures are printed, never asserted.
# The generated profile and its index are kept in DATA and reused.
# usage: bench/run_timeline_browser.sh [BUILD_DIR=build] [DATA=/tmp/xpv-tl-bench] [SIZE=465MB]
set -euo pipefail

. "$(dirname "$0")/serve.sh"
xpv_bench_args "${1:-}" "${2:-/tmp/xpv-tl-bench}" "${3:-465MB}"
command -v chromium >/dev/null || { echo "chromium is not installed (scripts/install-deps.sh test)" >&2; exit 1; }
if [ ! -d "$here/tests/browser/node_modules/playwright-core" ]; then
  (cd "$here/tests/browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi

if [ ! -d "$data/profiles" ]; then
  echo "generating a $size JAX profile (about 10 M events at 465MB) in $data/profiles ..."
  "$build/xpv-gen" --out "$data/profiles" --kind jax --size "$size" --devices 8 --no-json
fi
echo "indexing (reused when the index is current) ..."
/usr/bin/time -f "indexed in %e s, max RSS %M KB" \
  "$bin" --profile-dir="$data/profiles" --db="$data/index.sqlite" --list-only --quiet

xpv_bench_serve "$bin" "$data/profiles" "$data/index.sqlite" "$data/server.log"
sleep 15 # the (no-op) indexing run, then the server warms its resume marks

XPV_URL="$base" node "$here/bench/timeline_browser.mjs"
