#!/usr/bin/env bash
# run_attribution.sh — what placing command-buffer kernels on their HLO
# instructions costs at index time. Indexes the 33 MB JAX capture
# gpu/jax-maxtext (1.69 M events, 30 compiled modules) RUNS times in turn
# with attribution on and off (XPV_ATTRIBUTION=off, same binary), each into
# a fresh index, and prints per mode the best and median wall and CPU time
# and the peak RSS, and the ratios on / off (median of the pairs). With
# valgrind installed it also counts the instructions each mode executes
# for one indexing (callgrind), a figure the machine's load does not move.
# usage: bench/run_attribution.sh [BUILD_DIR=build]
#   env: WORK (/tmp/xpv-attrib), RUNS (7), FIXTURES (../shared/fixtures)
set -euo pipefail

SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$SRC/build}
WORK=${WORK:-/tmp/xpv-attrib}
RUNS=${RUNS:-7}
FIXTURES=${FIXTURES:-$SRC/../shared/fixtures}
DIR=$FIXTURES/gpu/jax-maxtext
[ -d "$DIR" ] || { echo "no $DIR: the shared fixtures are needed"; exit 1; }
mkdir -p "$WORK"
cmake --build "$BUILD" -j2 --target xprof-view >/dev/null
BIN=$BUILD/xprof-view
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: gpu/jax-maxtext, $(du -sh "$DIR" | cut -f1); $RUNS runs of each, in turn"

index() { # mode (on|off) round
    rm -f "$WORK/$1.sqlite"*
    XPV_ATTRIBUTION=$1 /usr/bin/time -f "%e %U %S %M" -o "$WORK/time.$1.$2" \
        "$BIN" --profile-dir="$DIR" --list-only --quiet --db="$WORK/$1.sqlite" >/dev/null
}
for round in $(seq "$RUNS"); do
    index off "$round"
    index on "$round"
done
python3 - "$WORK" "$RUNS" <<'PY'
import statistics, sys
work, runs = sys.argv[1], int(sys.argv[2])
def read(mode):
    out = []
    for r in range(1, runs + 1):
        wall, user, sys_, rss = open("%s/time.%s.%d" % (work, mode, r)).read().split()[:4]
        out.append((float(wall), float(user) + float(sys_), int(rss) / 1024))
    return out
off, on = read("off"), read("on")
for mode, rows in (("off", off), ("on ", on)):
    w, c = [x[0] for x in rows], [x[1] for x in rows]
    print("%s  wall best %.3f s median %.3f s   cpu best %.3f s median %.3f s   peak %.0f MB"
          % (mode, min(w), statistics.median(w), min(c), statistics.median(c),
             max(x[2] for x in rows)))
for i, what in ((0, "wall"), (1, "cpu")):
    ratios = [n[i] / b[i] for n, b in zip(on, off)]
    print("on/off %s: median %.3f (min %.3f, max %.3f)"
          % (what, statistics.median(ratios), min(ratios), max(ratios)))
PY
if command -v valgrind >/dev/null; then
    for mode in off on; do
        rm -f "$WORK/cg.sqlite"*
        XPV_ATTRIBUTION=$mode valgrind --tool=callgrind --callgrind-out-file=/dev/null "$BIN" \
            --profile-dir="$DIR" --list-only --quiet --db="$WORK/cg.sqlite" 2>&1 >/dev/null |
            sed -n "s/.*Collected : \([0-9]*\).*/$mode \1/p"
    done | awk '{n[NR]=$2; print "instructions " $1 ": " $2}
        END {printf "on/off instructions: %.3f\n", n[2] / n[1]}'
fi
