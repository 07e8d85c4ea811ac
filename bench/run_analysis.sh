#!/bin/sh
# run_analysis.sh — what the analysis (kernel summaries + step timelines,
# indexer/analysis/) costs, as a share of the whole indexing time, on large
# generated traces; and the peak RSS of indexing with and without it.
#
#   bench/run_analysis.sh [BUILD_DIR] [SIZE]     (defaults: build, 256MB)
#
# Each trace is indexed twice into a fresh index: with XPV_ANALYSIS=off
# (the analysis hook returns at once and finish writes nothing) and with the
# analysis on and XPV_TIMING=1 (which prints the time of the finish phase).
# Share = (on - off) / on: the analysis's whole cost, the per-event hook on
# the writer thread included. Prints figures; asserts nothing.
set -eu
BUILD=${1:-build}
SIZE=${2:-256MB}
BIN=$BUILD/xprof-view
GEN=$BUILD/xpv-gen
WORK=${TMPDIR:-/tmp}/xpv-bench-analysis-$$
[ -x "$BIN" ] && [ -x "$GEN" ] || { echo "build $BUILD first (xprof-view, xpv-gen)"; exit 1; }
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

# index DIR DB ENV... -> prints "wall_s max_rss_kb", finish lines on stderr file
index() {
    dir=$1 db=$2
    shift 2
    rm -f "$db" "$db-wal" "$db-shm"
    env "$@" /usr/bin/time -f "%e %M" -o "$WORK/time" "$BIN" --list-only --quiet \
        --profile-dir "$dir" --db "$db" >/dev/null 2>"$WORK/stderr" || true
    cat "$WORK/time"
}

printf '%-8s %-22s %10s %9s %9s %9s %8s %10s %10s\n' kind file events off_s on_s finish_s share \
    rss_off_MB rss_on_MB
for kind in jax pytorch; do
    out=$WORK/$kind
    "$GEN" --out "$out" --kind "$kind" --size "$SIZE" --steps 50 >/dev/null
    for f in $(find "$out" -type f \( -name '*.xplane.pb' -o -name '*.json.gz' \) | sort); do
        one=$WORK/one-$kind
        rm -rf "$one"
        mkdir -p "$one/plugins/profile/run"
        ln "$f" "$one/plugins/profile/run/" 2>/dev/null || cp "$f" "$one/plugins/profile/run/"
        set -- $(index "$one" "$WORK/off.sqlite" XPV_ANALYSIS=off)
        off_s=$1 off_rss=$2
        set -- $(index "$one" "$WORK/on.sqlite" XPV_TIMING=1)
        on_s=$1 on_rss=$2
        fin=$(sed -n 's/^xpv-analysis: finish \([0-9.]*\) s.*/\1/p' "$WORK/stderr" | head -1)
        events=$(sqlite3 "$WORK/on.sqlite" "SELECT events FROM profiles" 2>/dev/null || echo '?')
        awk -v k="$kind" -v f="$(basename "$f")" -v ev="$events" -v off="$off_s" -v on="$on_s" \
            -v fin="${fin:-0}" -v ro="$off_rss" -v rn="$on_rss" 'BEGIN {
            printf "%-8s %-22s %10s %9.2f %9.2f %9.3f %7.1f%% %10.0f %10.0f\n", k, f, ev, off, on,
                fin, (on > 0 ? 100 * (on - off) / on : 0), ro / 1024, rn / 1024 }'
    done
done
