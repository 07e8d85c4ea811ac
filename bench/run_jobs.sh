#!/usr/bin/env bash
# run_jobs.sh — how indexing scales with --jobs (issue 25). Indexes one
# generated pod run (HOSTS JAX hosts of SIZE each, xplane and trace-JSON
# twin, made once under WORK) with each job count of JOBS, RUNS times in
# turn, each into a fresh index, and prints per job count the best and
# median wall time, the CPU time (user + sys), the peak RSS, the speed-up
# against one job, and with several jobs the CPU the one writer spent
# moving parts in (XPV_TIMING) and the speed-up it bounds (all CPU / the
# writer's); then checks that every index has the same tables
# (bench/index_tables.py) as the one-job index.
# usage: bench/run_jobs.sh [BUILD_DIR=build]
#   env: WORK (/tmp/xpv-jobs), HOSTS (8), SIZE (40MB), JOBS ("1 2"), RUNS (3)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
WORK=${WORK:-/tmp/xpv-jobs}
HOSTS=${HOSTS:-8}
SIZE=${SIZE:-40MB}
JOBS=${JOBS:-1 2}
RUNS=${RUNS:-3}
cmake --build "$BUILD" -j2 --target xprof-view xpv-gen >/dev/null
RUN_DIR=$WORK/pod-$HOSTS-$SIZE
if [ ! -d "$RUN_DIR" ]; then
    "$BUILD/xpv-gen" --out "$RUN_DIR.tmp" --kind jax --hosts "$HOSTS" --size "$SIZE" >/dev/null
    mv "$RUN_DIR.tmp" "$RUN_DIR"
fi
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: $HOSTS hosts x $SIZE (xplane + trace JSON), $(du -sh "$RUN_DIR" | cut -f1) in" \
    "$(find "$RUN_DIR" -type f | wc -l) files; best of $RUNS runs, in turn"

rm -f "$WORK"/time.* "$WORK"/stderr.*
for round in $(seq "$RUNS"); do
    for j in $JOBS; do
        rm -f "$WORK/j$j.sqlite"*
        XPV_TIMING=1 /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.$j.$round" \
            "$BUILD/xprof-view" --profile-dir="$RUN_DIR" --list-only --quiet --jobs="$j" \
            --db="$WORK/j$j.sqlite" >/dev/null 2>"$WORK/stderr.$j.$round"
        writer=$(sed -n 's/^xprof-view: index writer: \([0-9.]*\) s CPU.*/\1/p' "$WORK/stderr.$j.$round")
        sed -i "s/\$/ ${writer:-0}/" "$WORK/time.$j.$round"
    done
done

printf '%-6s %10s %10s %10s %12s %9s %10s %9s\n' jobs best_s median_s cpu_s peak_rss_mb speed-up \
    writer_cpu bound
for j in $JOBS; do
    cat "$WORK"/time."$j".* | sort -n | awk -v j="$j" '
        { wall[NR] = $1; cpu[NR] = $2 + $3; w[NR] = $5; rss = ($4 > rss ? $4 : rss) }
        END { printf "%s %.2f %.2f %.2f %.0f %.2f\n", j, wall[1], wall[int((NR + 1) / 2)], cpu[1],
                     rss / 1024, w[1] }'
done | awk 'NR == 1 { base = $2 }
    { bound = $6 > 0 ? sprintf("%8.1fx", $4 / $6) : "        -"
      printf "%-6s %10.2f %10.2f %10.2f %12.0f %8.2fx %10.2f %s\n", $1, $2, $3, $4, $5, base / $2, $6, bound }'

first=$(echo "$JOBS" | cut -d' ' -f1)
for j in $JOBS; do
    [ "$j" = "$first" ] && continue
    python3 "$SRC/bench/index_tables.py" "$WORK/j$first.sqlite" "$WORK/j$j.sqlite"
done
