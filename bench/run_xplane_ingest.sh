#!/usr/bin/env bash
# run_xplane_ingest.sh — xplane ingest speed and memory on a generated ~1 GB
# JAX profile (many planes and lines, tens of millions of events, thousands
# of metadata entries), against a minimal SQLite insert loop measured in the
# same run. Prints the figures and ratios; asserts nothing.
#
#   bench/run_xplane_ingest.sh [BUILD_DIR=build] [SIZE=1GB] [WORK_DIR=/tmp/xpv-bench-xplane]
#
# Targets (issue 4): events/s >= 75% of the minimal loop's rows/s; peak RSS
# <= 200 MB + the mapped file. With perf installed, also where the CPU time
# goes, by source file (reader, sink, event store, analysis, SQLite).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
size=${2:-1GB}
work=${3:-/tmp/xpv-bench-xplane}
gen=$build/xpv-gen
bin=$build/xprof-view
ins=$build/bench_xplane_insert
dec=$build/bench_xplane_decode
for f in "$gen" "$bin" "$ins" "$dec"; do
    [ -x "$f" ] || { echo "missing $f: cmake --build $build first" >&2; exit 2; }
done

mkdir -p "$work"
pb=$(find "$work/gen-$size" -name '*.xplane.pb' 2>/dev/null | head -1 || true)
if [ -z "$pb" ]; then
    echo "generating a $size JAX profile in $work/gen-$size ..."
    t0=$(date +%s.%N)
    "$gen" --out "$work/gen-$size" --kind jax --devices 8 --steps 200 --size "$size" --no-json
    echo "generated in $(echo "$(date +%s.%N) - $t0" | bc) s"
    pb=$(find "$work/gen-$size" -name '*.xplane.pb' | head -1)
fi
bytes=$(stat -c %s "$pb")
echo "file: $pb ($bytes bytes)"

# (a) the yardstick, 10M rows
"$ins" 10000000 "$work" > "$work/minimal.txt"
minimal=$(sed -n 's/^minimal_rows_per_s=//p' "$work/minimal.txt")

# (a2) the reader alone, into a counting sink (no store, no analysis)
"$dec" "$pb" > "$work/decode.txt"
dec_eps=$(sed -n 's/^decode_events_per_s=//p' "$work/decode.txt")
dec_mbs=$(sed -n 's/^decode_mb_per_s=//p' "$work/decode.txt")

# (b) the ingest, into a fresh index
rm -f "$work"/fresh.db*
/usr/bin/time -v "$bin" --profile-dir="$pb" --list-only --json --db="$work/fresh.db" \
    > "$work/listing.json" 2> "$work/time.txt"
wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$work/time.txt" |
       awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
rss_kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$work/time.txt")
read -r status events index_s < <(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))[0]
print(p["status"], p["events"], p["index_seconds"])' "$work/listing.json")

python3 - "$bytes" "$minimal" "$wall" "$rss_kb" "$status" "$events" "$index_s" "$dec_eps" \
    "$dec_mbs" <<'PY'
import sys
size, minimal, wall, rss_kb, status, events, index_s, dec_eps, dec_mbs = sys.argv[1:]
size, minimal, wall, rss_kb, events, index_s = (int(size), float(minimal), float(wall),
                                               int(rss_kb), int(events), float(index_s))
eps = events / wall
print("status:                 %s" % status)
print("events:                 %d (%.1f bytes/event)" % (events, size / max(events, 1)))
print("minimal insert loop:    %.2f M rows/s" % (minimal / 1e6))
print("ingest wall time:       %.2f s (indexing %.2f s of it)" % (wall, index_s))
print("ingest rate:            %.2f M events/s, %.0f MB/s" % (eps / 1e6, size / wall / 2**20))
print("ratio to minimal loop:  %.2f (target >= 0.75)" % (eps / minimal))
print("reader alone:           %.2f M events/s, %s MB/s (%.2fx the minimal loop)"
      % (float(dec_eps) / 1e6, dec_mbs, float(dec_eps) / minimal))
print("peak RSS:               %.0f MB = mapped file %.0f MB + %.0f MB (target: + <= 200 MB)"
      % (rss_kb / 1024, size / 2**20, rss_kb / 1024 - size / 2**20))
PY

# (c) where the time goes (optional)
if command -v perf > /dev/null && [ "${XPV_BENCH_PERF:-1}" = 1 ]; then
    rm -f "$work"/fresh.db*
    if perf record -q -o "$work/perf.data" -F 499 -g "$bin" --profile-dir="$pb" --list-only \
        --db="$work/fresh.db" > /dev/null 2>&1; then
        echo "CPU samples by source file (reader: protobuf.h, xplane_*.c; sink: ingest.c;"
        echo "store: event_store.c; analysis: indexer/analysis/*; blank: SQLite/kernel):"
        perf report -i "$work/perf.data" --no-children --sort srcfile 2> /dev/null |
            grep -v '^#' | grep '%' | grep -v -- '--' | head -20
    fi
fi
rm -f "$work"/fresh.db*
