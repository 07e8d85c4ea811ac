#!/usr/bin/env bash
# run_timeline_browser.sh — the timeline in headless Chromium, this build
# against a reference built from REF (default: main) in the same run, on a
# ~10 M-event generated profile and on the largest real fixture traces
# (jax-maxtext's xplane, the PyTorch V100 and H100 JSON, the TF GPU one):
# first paint, and the p50/p95 of scripted wheel zoom, drag-to-pan, key pan,
# select and area-select (input to next frame, and input to settled), and a
# findings evidence link to its event selected (bench/timeline_browser.mjs),
# as ratios reference/new with the load average. Targets (issue 39): p95
# input -> next frame < 50 ms, evidence link -> selected < 500 ms. Figures
# are printed, never asserted.
# The generated profile, its index and the reference binary (built once per
# REF commit under build-ref/, through ccache) are kept and reused.
# usage: bench/run_timeline_browser.sh [BUILD_DIR=build] [DATA=/tmp/xpv-tl-bench] [SIZE=465MB]
#        env REF=<commit> (default main), XPV_ROUNDS, XPV_N, ONLY=gen|real
set -euo pipefail

. "$(dirname "$0")/serve.sh"
xpv_bench_args "${1:-}" "${2:-/tmp/xpv-tl-bench}" "${3:-465MB}"
command -v chromium >/dev/null || { echo "chromium is not installed (scripts/install-deps.sh test)" >&2; exit 1; }
if [ ! -d "$here/tests/browser/node_modules/playwright-core" ]; then
  (cd "$here/tests/browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
fixtures=${XPV_FIXTURES:-$here/../shared/fixtures}

# The reference: the same C sources at REF with REF's static files. Its
# tree sits at the worktree's depth (build-ref/src, built in build-rel) so
# ccache finds the objects this tree compiled.
ref_sha=$(git -C "$here" rev-parse "${REF:-main}")
refsrc=$here/build-ref/src-${ref_sha:0:12}
refbin=$refsrc/build-rel/xprof-view
if [ ! -x "$refbin" ]; then
  echo "building the reference ${ref_sha:0:12} in $refsrc ..."
  rm -rf "$refsrc" && mkdir -p "$refsrc"
  git -C "$here" archive "$ref_sha" | tar -x -C "$refsrc"
  cmake -S "$refsrc" -B "$refsrc/build-rel" -DCMAKE_BUILD_TYPE=Release \
    ${CMAKE_C_COMPILER_LAUNCHER:+-DCMAKE_C_COMPILER_LAUNCHER=$CMAKE_C_COMPILER_LAUNCHER} >/dev/null
  cmake --build "$refsrc/build-rel" -j2 --target xprof-view >/dev/null
fi

if [ ! -d "$data/profiles" ]; then
  echo "generating a $size JAX profile (about 10 M events at 465MB) in $data/profiles ..."
  "$build/xpv-gen" --out "$data/profiles" --kind jax --size "$size" --devices 8 --no-json
fi
# The real traces, copied so that their directory holds them alone.
if [ ! -d "$data/real" ]; then
  mkdir -p "$data/real/torch-h100" "$data/real/jax-maxtext"
  cp -r "$fixtures/gpu/jax-maxtext/." "$data/real/jax-maxtext/"
  cp "$fixtures"/gpu/torch-train/*.json.gz "$data/real/torch-h100/"
  cp "$fixtures/chrome-json/pytorch-v100-resnet50.pt.trace.json.gz" "$fixtures/chrome-json/tf1-xla-gpu-timeline.ctf.json" "$data/real/"
fi

# Serves DIR with this build and the reference (each its own index, the
# reference's a copy of this one's: the C sources are the same) and runs
# the page on both.
run_pair() {
  local dir=$1 db=$2 new_base ref_base new_pid
  echo "indexing $dir (reused when the index is current) ..."
  /usr/bin/time -f "indexed in %e s, max RSS %M KB" "$bin" --profile-dir="$dir" --db="$db" --list-only --quiet
  [ -f "$db.ref" ] || cp "$db" "$db.ref"
  xpv_bench_serve "$bin" "$dir" "$db" "$data/server.log"
  new_base=$base new_pid=$pid
  xpv_bench_serve "$refbin" "$dir" "$db.ref" "$data/server-ref.log"
  ref_base=$base
  trap 'kill $pid $new_pid 2>/dev/null; wait $pid $new_pid 2>/dev/null || true' EXIT
  sleep 15 # the servers warm their resume marks
  XPV_URL=$new_base XPV_REF_URL=$ref_base node "$here/bench/timeline_browser.mjs"
  kill "$pid" "$new_pid" 2>/dev/null
  wait "$pid" "$new_pid" 2>/dev/null || true
  trap - EXIT
}

echo "new: $bin ($(git -C "$here" rev-parse --short HEAD), working tree's static/ as built); reference: $refbin (${ref_sha:0:12})"
[ "${ONLY:-}" = real ] || run_pair "$data/profiles" "$data/index.sqlite"
[ "${ONLY:-}" = gen ] || run_pair "$data/real" "$data/real.sqlite"
