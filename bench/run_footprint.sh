#!/usr/bin/env bash
# run_footprint.sh — index footprint, ingest time and window latency, before
# and after (issue 25). Inputs, made once under WORK and reused:
#   pytorch-x40  the V100 ResNet-50 fixture's non-metadata events 40 times,
#                each copy shifted past the previous (bench/footprint_trace.py)
#   jax-json     the trace.json.gz of one xpv-gen JAX profile (SIZE_JAX)
#   jax-xplane   the xplane.pb of that same profile
#   events10m    the ~10 M-event JAX xplane of bench/run_events.sh
# For each binary (before: BEFORE, by default main built in WORK/build-main;
# after: BUILD_DIR's) and input it prints the index's bytes per event, its
# ratio to the source (a JSON source's gzip file; an xplane's own size),
# the best-of-RUNS ingest wall time and, for gzip sources, its ratio to the
# zlib inflate floor (bench_json_inflate on the same file, in this run);
# then bench_events' window latencies on each binary's 10 M-event index.
# Targets: index <= 2x gzip (JSON), <= 0.5x (xplane); ingest <= 4x the
# inflate floor; every window < 50 ms.
# usage: bench/run_footprint.sh [BUILD_DIR=build]
#   env: WORK (/tmp/xpv-footprint), BEFORE (an old xprof-view), RUNS (3),
#        SIZE_JAX (300MB), INPUTS (a subset of the four names above, in
#        the order to run them), SKIP_EVENTS=1 to leave out the 10 M-event part
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
WORK=${WORK:-/tmp/xpv-footprint}
RUNS=${RUNS:-3}
SIZE_JAX=${SIZE_JAX:-300MB}
FIXTURE=${FIXTURE:-$SRC/../shared/fixtures/chrome-json/pytorch-v100-resnet50.pt.trace.json.gz}
mkdir -p "$WORK"
# Up to date, or a stale bench_events would read the new index with old code.
cmake --build "$BUILD" -j2 --target xprof-view xpv-gen bench_json_inflate bench_events >/dev/null

if [ -z "${BEFORE:-}" ]; then
    BEFORE=$WORK/build-main/xprof-view
    if [ ! -x "$BEFORE" ]; then
        echo "building main's xprof-view in $WORK/build-main (the 'before') ..." >&2
        rm -rf "$WORK/src-main" && mkdir -p "$WORK/src-main"
        git -C "$SRC" archive main | tar -x -C "$WORK/src-main"
        cmake -S "$WORK/src-main" -B "$WORK/build-main" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
        cmake --build "$WORK/build-main" -j2 --target xprof-view >/dev/null
    fi
fi

# ---- inputs ----
if [ ! -f "$WORK/pytorch-x40/resnet50-x40.pt.trace.json.gz" ]; then
    [ -f "$FIXTURE" ] || { echo "need the fixture $FIXTURE (../shared)" >&2; exit 1; }
    mkdir -p "$WORK/pytorch-x40"
    python3 "$SRC/bench/footprint_trace.py" "$FIXTURE" 40 "$WORK/pytorch-x40/resnet50-x40.pt.trace.json.gz"
fi
if [ ! -d "$WORK/jax-xplane" ]; then
    rm -rf "$WORK/jax-gen" "$WORK/jax-json"
    "$BUILD/xpv-gen" --out "$WORK/jax-gen" --kind jax --size "$SIZE_JAX" >/dev/null
    mkdir -p "$WORK/jax-json"
    mv "$WORK/jax-gen"/plugins/profile/*/*.trace.json.gz "$WORK/jax-json/"
    mv "$WORK/jax-gen" "$WORK/jax-xplane"
fi
if [ "${SKIP_EVENTS:-0}" != 1 ] && [ ! -d "$WORK/events10m/profiles" ]; then
    "$BUILD/xpv-gen" --out "$WORK/events10m/profiles" --kind jax --size 520MB --devices 8 --no-json >/dev/null
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); runs: best of $RUNS"
echo "before: $BEFORE"
echo "after:  $BUILD/xprof-view"

# best_time CMD...: the least wall time of RUNS runs, in seconds (a shared
# machine's load only ever slows a run down)
best_time() {
    local times=()
    for _ in $(seq "$RUNS"); do
        local t0 t1
        t0=$(date +%s%N)
        "$@" >/dev/null
        t1=$(date +%s%N)
        times+=($((t1 - t0)))
    done
    python3 -c 'import sys; print("%.3f" % (min(map(int, sys.argv[1:])) / 1e9))' "${times[@]}"
}

index_of() { # BIN DIR DB: indexes DIR into a fresh DB
    rm -f "$3" "$3-wal" "$3-shm" "$3-journal"
    "$1" "--profile-dir=$2" "--db=$3" --list-only --quiet
}

printf "\n%-11s %-6s %10s %10s %12s %8s %9s %8s %8s\n" input build events source index B/event ratio ingest_s x_floor
INPUTS=${INPUTS:-pytorch-x40 jax-json jax-xplane events10m}
for input in $INPUTS; do
    [ "$input" = events10m ] && [ "${SKIP_EVENTS:-0}" = 1 ] && continue
    dir=$WORK/$input
    [ "$input" = events10m ] && dir=$WORK/events10m/profiles
    file=$(find "$dir" -name '*.json.gz' -o -name '*.xplane.pb' | head -1)
    floor=
    case "$file" in
        *.gz) floor=$(for _ in $(seq "$RUNS"); do "$BUILD/bench_json_inflate" "$file"; done |
                          sed -n 's/.* bytes in \([0-9.]*\) s.*/\1/p' | sort -g | head -1) ;;
    esac
    [ -n "$floor" ] && echo "$input: inflate floor ${floor} s"
    for which in before after; do
        bin=$BEFORE
        [ $which = after ] && bin=$BUILD/xprof-view
        db=$WORK/idx-$which-$input.sqlite
        t=$(best_time index_of "$bin" "$dir" "$db")
        python3 - "$db" "$file" "$input" "$which" "$t" "$floor" <<'PYEOF'
import os, sqlite3, sys
db, src, name, which, t, floor = sys.argv[1:7]
size = sum(os.path.getsize(db + s) for s in ("", "-wal") if os.path.exists(db + s))
events = sqlite3.connect(db).execute("SELECT sum(events) FROM profiles").fetchone()[0]
srcsize = os.path.getsize(src)
x = "%8.2f" % (float(t) / float(floor)) if floor else "       -"
print("%-11s %-6s %10d %10d %12d %8.1f %9.2f %8.2f %s" % (name, which, events, srcsize, size,
      size / events, size / srcsize, float(t), x))
PYEOF
    done
done

if [ "${SKIP_EVENTS:-0}" != 1 ] && [ -f "$WORK/idx-after-events10m.sqlite" ]; then
    for which in before after; do
        echo
        echo "== events window, $which (bench_events, resolution 1500, 7 runs) =="
        "$BUILD/bench_events" "$WORK/idx-$which-events10m.sqlite" latest 1500 7
    done
fi
