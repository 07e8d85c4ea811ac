#!/bin/sh
# run_analysis.sh — what the analysis (kernel summaries + step timelines,
# indexer/analysis/) costs, as a share of the whole indexing time, on large
# generated traces; and the peak RSS of indexing with and without it.
#
#   bench/run_analysis.sh [BUILD_DIR] [SIZE] [RUNS]   (defaults: build 256MB 5)
#
# Each trace is indexed RUNS times into a fresh index with XPV_ANALYSIS=off
# (the analysis hook returns at once and finish writes nothing) and RUNS
# times with the analysis on and XPV_TIMING=1 (which prints the time of the
# finish phase), off and on alternating so that a machine slowing down or
# speeding up weighs on both. share = (on - off) / on, in wall time and in
# CPU time (user + sys, all threads): the analysis's whole cost, the
# per-event hook on the writer thread included. Two wall-time figures:
# best = from the minimum of each mode (other work on the machine only adds
# time, but one lucky run of either mode swings it), and pairs = the
# median over the rounds of the share within each round's off/on pair,
# which drift between rounds cannot bias; on a machine whose speed wanders
# (shared cloud cores) trust pairs. Prints figures; asserts nothing.
set -eu
BUILD=${1:-build}
SIZE=${2:-256MB}
RUNS=${3:-5}
BIN=$BUILD/xprof-view
GEN=$BUILD/xpv-gen
WORK=${TMPDIR:-/tmp}/xpv-bench-analysis-$$
[ -x "$BIN" ] && [ -x "$GEN" ] || { echo "build $BUILD first (xprof-view, xpv-gen)"; exit 1; }
mkdir -p "$WORK"
trap 'rm -rf "$WORK"' EXIT

# one_run DIR DB ENV LOG: indexes DIR into a fresh DB, appending
# "wall_s user_s sys_s max_rss_kb" to LOG and the finish time, if printed,
# to LOG.finish
one_run() {
    rm -f "$2" "$2-wal" "$2-shm"
    env "$3" /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$BIN" --list-only --quiet \
        --profile-dir "$1" --db "$2" >/dev/null 2>"$WORK/stderr" || true
    cat "$WORK/time" >>"$4"
    sed -n 's/^xpv-analysis: finish \([0-9.]*\) s.*/\1/p' "$WORK/stderr" >>"$4.finish"
}

# pair_share OFF_LOG ON_LOG -> median over rounds of (on - off) / on in %
pair_share() {
    paste -d' ' "$1" "$2" | awk '{ print ($5 > 0 ? 100 * ($5 - $1) / $5 : 0) }' | sort -n |
        awk '{ v[NR] = $1 } END { if (NR == 0) print 0; else if (NR % 2) print v[(NR + 1) / 2];
                                 else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# best LOG -> "wall_s cpu_s max_rss_kb" (minimum wall and CPU, maximum RSS)
best() {
    awk 'NR == 1 || $1 < w { w = $1 } NR == 1 || $2 + $3 < c { c = $2 + $3 }
         $4 > m { m = $4 } END { printf "%s %s %s\n", w, c, m }' "$1"
}

printf '%-8s %-12s %9s %7s %7s %8s %7s %7s %7s %7s %7s %7s\n' kind file events off_s on_s finish_s \
    best% pairs% off_cpu on_cpu cpu% rss_MB
for kind in jax pytorch; do
    out=$WORK/$kind
    "$GEN" --out "$out" --kind "$kind" --size "$SIZE" --steps 50 >/dev/null
    for f in $(find "$out" -type f \( -name '*.xplane.pb' -o -name '*.json.gz' \) | sort); do
        one=$WORK/one-$kind
        rm -rf "$one"
        mkdir -p "$one/plugins/profile/run"
        ln "$f" "$one/plugins/profile/run/" 2>/dev/null || cp "$f" "$one/plugins/profile/run/"
        : >"$WORK/off" && : >"$WORK/on" && : >"$WORK/on.finish"
        i=0
        while [ $i -lt "$RUNS" ]; do
            one_run "$one" "$WORK/off.sqlite" XPV_ANALYSIS=off "$WORK/off"
            one_run "$one" "$WORK/on.sqlite" XPV_TIMING=1 "$WORK/on"
            i=$((i + 1))
        done
        set -- $(best "$WORK/off")
        off_s=$1 off_cpu=$2 off_rss=$3
        set -- $(best "$WORK/on")
        on_s=$1 on_cpu=$2 on_rss=$3
        fin=$(sort -n "$WORK/on.finish" | head -1)
        pairs=$(pair_share "$WORK/off" "$WORK/on")
        events=$(sqlite3 "$WORK/on.sqlite" "SELECT events FROM profiles" 2>/dev/null || echo '?')
        case $f in *.xplane.pb) short=xplane ;; *.pt.trace.json.gz) short=pt.json.gz ;;
            *) short=trace.json.gz ;; esac
        awk -v k="$kind" -v f="$short" -v ev="$events" -v off="$off_s" -v on="$on_s" -v pairs="$pairs" \
            -v fin="${fin:-0}" -v oc="$off_cpu" -v nc="$on_cpu" -v ro="$off_rss" -v rn="$on_rss" \
            'BEGIN { printf "%-8s %-12s %9s %7.2f %7.2f %8.3f %6.1f%% %6.1f%% %7.2f %7.2f %6.1f%% %3.0f/%3.0f\n",
                k, f, ev, off, on, fin, (on > 0 ? 100 * (on - off) / on : 0), pairs, oc, nc,
                (nc > 0 ? 100 * (nc - oc) / nc : 0), ro / 1024, rn / 1024 }'
    done
done
echo "best%: from the best off and best on; pairs%: median of each round's own share"
echo "rss_MB: peak resident set, analysis off/on (max over runs)"
